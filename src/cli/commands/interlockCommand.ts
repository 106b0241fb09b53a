import { createInterface } from 'node:readline';
import { INTERLOCK_PROTOCOL, type InterlockSnapshot, type InterlockTrip } from '../../domain/interlock';
import { startInterlockEmulator, type InterlockEmulator } from '../../services/interlock/interlockEmulator';
import { listSerialPorts } from '../../services/interlock/listSerialPorts';
import { startPtyPair, type PtyPair } from '../../services/interlock/ptyPair';
import { openInterlock } from '../../services/interlock/serialInterlock';
import { checkOutputFiles, defineCommand, numberOption } from '../cliOptions';
import { onSignal, printJson, stdinOf, UsageError, untilSignal, type CliIo, type Command } from '../cliSupport';

// `motionbench emulate-interlock`, `motionbench interlock monitor`, `motionbench interlock list`:
// the serial safety interlock from the command line (docs/INTERLOCK.md).

// ---- emulate-interlock ---------------------------------------------------------------------

const emulateUsage = `usage: motionbench emulate-interlock (--pty <device> | --make-pty <link>) [--watchdog-ms N] [--trip-to safe|estop] [--force] [--json]
  Emulates the serial interlock box (${INTERLOCK_PROTOCOL.baudRate} 8N1, docs/INTERLOCK.md) on a serial device: answers
  every "HB <seq>" with "ST <SAFE|ARMED|ESTOP> <seq>", obeys ARM/DISARM, and trips itself when
  heartbeats stop for longer than the watchdog.
  --pty P          open serial device P as the box (e.g. one end of a socat pty pair)
  --make-pty L     start socat and make the pair: L is the console's end (give it to the console),
                   L.box the emulator's; both vanish when this command stops. An existing L or
                   L.box is refused (socat would replace it, then delete it)
  --force          with --make-pty: replace an existing L / L.box (e.g. links left by a crash)
  --watchdog-ms N  heartbeat watchdog (default ${INTERLOCK_PROTOCOL.silenceLimitMs})
  --trip-to T      where the watchdog trips the box: safe (default) or estop (latched until reset)
  --json           print {device, console_path, pid, watchdog_ms, trip_to} as JSON once ready
Control, one word per line on stdin: estop | reset | silent | talk | garbage | status | quit.
Signals: SIGUSR1 presses the e-stop, SIGUSR2 releases it; SIGINT/SIGTERM stop.`;

export interface EmulateInterlockDeps {
  untilStopped(io: CliIo): Promise<string>;
  input(io: CliIo): NodeJS.ReadableStream | null;
}

export function makeEmulateInterlockCommand(
  deps: EmulateInterlockDeps = { untilStopped: untilSignal, input: stdinOf },
): Command {
  return defineCommand({
    name: 'emulate-interlock',
    summary: 'emulate the serial interlock box on a serial device or a new pty pair',
    usage: emulateUsage,
    strings: ['pty', 'make-pty', 'watchdog-ms', 'trip-to'],
    flags: ['force', 'json'],
    async run(values, io) {
      if ((values.pty === undefined) === (values['make-pty'] === undefined))
        throw new UsageError(`give exactly one of --pty and --make-pty\n${emulateUsage}`);
      if (values['make-pty'] !== undefined) {
        const link = values['make-pty'];
        checkOutputFiles(
          [
            { option: 'make-pty', file: link },
            { option: 'make-pty (its .box end)', file: link === '' ? undefined : `${link}.box` },
          ],
          [],
          values.force === true,
        );
      }
      const watchdogMs =
        numberOption(values['watchdog-ms'], 'watchdog-ms', (v) => v >= 20 && v <= 10_000, 'a time in [20, 10000] ms') ??
        INTERLOCK_PROTOCOL.silenceLimitMs;
      const tripTo = values['trip-to'] ?? 'safe';
      if (tripTo !== 'safe' && tripTo !== 'estop')
        throw new UsageError(`--trip-to must be safe or estop, got "${tripTo}"`);

      let pair: PtyPair | null = null;
      let device = values.pty!;
      if (values['make-pty'] !== undefined) {
        pair = await startPtyPair({ consoleLink: values['make-pty'], deviceLink: `${values['make-pty']}.box` });
        device = pair.devicePath;
      }
      let emu: InterlockEmulator;
      try {
        emu = await startInterlockEmulator({
          path: device,
          watchdogMs,
          watchdogTripTo: tripTo === 'safe' ? 'SAFE' : 'ESTOP',
        });
      } catch (err) {
        await pair?.close();
        throw err;
      }
      const say = (s: string): void => io.stderr(`emulate-interlock: ${s}\n`);
      emu.on('state', (state: string) => say(`box ${state}`));
      const doc = {
        device,
        console_path: pair?.consolePath ?? null,
        pid: process.pid,
        watchdog_ms: watchdogMs,
        trip_to: tripTo,
      };
      if (values.json) printJson(io, doc);
      else io.stdout(`interlock emulator on ${device}${pair ? `; console end: ${pair.consolePath}` : ''}\n`);

      let quit!: (why: string) => void;
      const quitRequested = new Promise<string>((r) => (quit = r));
      const offUsr1 = onSignal(io, 'SIGUSR1', () => emu.pressEstop());
      const offUsr2 = onSignal(io, 'SIGUSR2', () => emu.releaseEstop());
      const input = deps.input(io);
      const rl = input ? createInterface({ input, terminal: false }) : null;
      rl?.on('line', (raw) => {
        const word = raw.trim().toLowerCase();
        if (word === '') return;
        switch (word) {
          case 'estop':
            emu.pressEstop();
            break;
          case 'reset':
            emu.releaseEstop();
            break;
          case 'silent':
            emu.setSilent(true);
            say('silent');
            break;
          case 'talk':
            emu.setSilent(false);
            say('talking');
            break;
          case 'garbage':
            emu.sendGarbage().catch(() => {});
            say('garbage sent');
            break;
          case 'status':
            say(JSON.stringify(emu.stats()));
            break;
          case 'quit':
            quit('quit');
            break;
          default:
            say(`unknown control "${word}" (estop | reset | silent | talk | garbage | status | quit)`);
        }
      });
      const why = await Promise.race([deps.untilStopped(io), quitRequested, emu.closed.then(() => 'port closed')]);
      rl?.close();
      offUsr1();
      offUsr2();
      const stats = emu.stats();
      await emu.close();
      await pair?.close();
      say(
        `${why}: stopped; ${stats.heartbeats} heartbeats, ${stats.arms} arms (${stats.armsRefused} refused), ${stats.watchdogTrips} watchdog trips, ${stats.garbageLines} garbage lines`,
      );
      if (why === 'port closed') {
        io.stderr(`motionbench: the serial device ${device} closed\n`);
        return 1;
      }
      return 0;
    },
  });
}

export const emulateInterlockCommand: Command = makeEmulateInterlockCommand();

// ---- interlock monitor ---------------------------------------------------------------------

const monitorUsage = `usage: motionbench interlock monitor --device <path> [--duration S] [--arm] [--json]
  Opens the serial interlock (${INTERLOCK_PROTOCOL.baudRate} 8N1), heartbeats every ${INTERLOCK_PROTOCOL.heartbeatPeriodMs} ms and reports state changes,
  trips and line problems on stderr. Nothing moves a robot here.
  --device P    the interlock's serial device
  --duration S  stop after S seconds (default: until Ctrl+C)
  --arm         arm once the box reports SAFE (the operator's ARM); disarmed again before closing
  --json        print a summary {state, trips, freshness, counters, arm} as JSON at the end
Exits 1 with the reason if the interlock tripped or ARM failed.`;

export interface InterlockMonitorDeps {
  untilStopped(io: CliIo): Promise<string>;
}

const summarize = (trip: InterlockTrip) => ({
  reason: trip.reason,
  from: trip.fromState,
  to: trip.toState,
  was_armed: trip.wasArmed,
  since_last_status_ms: trip.sinceLastStatusMs === null ? null : Number(trip.sinceLastStatusMs.toFixed(3)),
  detail: trip.detail,
});

export function makeInterlockMonitorCommand(deps: InterlockMonitorDeps = { untilStopped: untilSignal }): Command {
  return defineCommand({
    name: 'interlock monitor',
    summary: 'watch the serial interlock: status, heartbeat round trip, trips',
    usage: monitorUsage,
    strings: ['device', 'duration'],
    flags: ['arm', 'json'],
    async run(values, io) {
      if (!values.device) throw new UsageError(`--device is required\n${monitorUsage}`);
      const durationS = numberOption(
        values.duration,
        'duration',
        (v) => v > 0 && v <= 86_400,
        'a time in (0, 86400] s',
      );
      const say = (s: string): void => io.stderr(`interlock: ${s}\n`);
      const trips: InterlockTrip[] = [];
      let lastState = '';
      const link = await openInterlock({
        path: values.device,
        onTrip: (trip) => {
          trips.push(trip);
          say(`TRIP ${trip.reason}: ${trip.detail}`);
        },
        onStatus: (snap: InterlockSnapshot) => {
          if (snap.state !== lastState) {
            lastState = snap.state;
            say(`${snap.state} (box ${snap.deviceState ?? '?'})`);
          }
        },
        onProblem: (problem, line) => say(`problem ${problem}: ${JSON.stringify(line)}`),
        onEvent: (event) => say(`EV ${event}`),
        log: say,
      });
      let armResult: { ok: boolean; reason?: string; detail?: string; latency_ms?: number } | null = null;
      const stop = Promise.race([
        deps.untilStopped(io),
        link.closed.then(() => 'port closed'),
        ...(durationS ? [new Promise<string>((r) => setTimeout(() => r('duration'), durationS * 1000))] : []),
      ]);
      if (values.arm) {
        const safe = await Promise.race([
          (async () => {
            for (let i = 0; i < 100; i++) {
              if (link.state === 'safe' && link.snapshot().freshness.ageMs !== null) return true;
              await new Promise((r) => setTimeout(r, 10));
            }
            return false;
          })(),
          stop.then(() => false),
        ]);
        if (safe) {
          const r = await link.arm();
          armResult = r.ok
            ? { ok: true, latency_ms: Number(r.latencyMs.toFixed(3)) }
            : { ok: false, reason: r.reason, detail: r.detail };
          say(r.ok ? `armed in ${r.latencyMs.toFixed(1)} ms` : `ARM failed (${r.reason}): ${r.detail}`);
        } else {
          armResult = { ok: false, reason: 'not_safe', detail: `the interlock is ${link.state}, not safe, after 1 s` };
          say(`ARM not attempted: ${armResult.detail}`);
        }
      }
      const why = await stop;
      if (link.isArmedAndFresh()) await link.disarm();
      const snap = link.snapshot();
      await link.close();
      const summary = {
        device: values.device,
        stopped: why,
        state: snap.state,
        device_state: snap.deviceState,
        arm: armResult,
        trips: trips.map(summarize),
        freshness: snap.freshness,
        heartbeat: snap.heartbeat,
        counters: snap.counters,
      };
      if (values.json) printJson(io, summary);
      else
        io.stdout(
          `${snap.state}; rtt p50 ${snap.freshness.rttP50Ms?.toFixed(2) ?? '–'} ms, p99 ${snap.freshness.rttP99Ms?.toFixed(2) ?? '–'} ms; ${snap.counters.heartbeatsSent} heartbeats, ${snap.counters.garbageLines} garbage lines, ${trips.length} trips\n`,
        );
      if (trips.length > 0) {
        io.stderr(`motionbench: the interlock tripped (${trips.map((t) => t.reason).join(', ')})\n`);
        return 1;
      }
      if (armResult && !armResult.ok) {
        io.stderr(`motionbench: ARM failed: ${armResult.detail}\n`);
        return 1;
      }
      return 0;
    },
  });
}

export const interlockMonitorCommand: Command = makeInterlockMonitorCommand();

// ---- interlock list ------------------------------------------------------------------------

const listUsage = `usage: motionbench interlock list [--force] [--json]
  Lists serial ports where an interlock box may be. SerialPort.list() needs udev and can crash
  the process without it, so it runs in a child process, and not at all when /run/udev is
  missing: then /dev is scanned for ttyUSB*/ttyACM* (and /dev/serial/by-id).
  --force  run SerialPort.list() (in its child process) even without /run/udev
  --json   print {method, note, ports: [{path, manufacturer, serialNumber, vendorId, productId}]}`;

export const interlockListCommand = defineCommand({
  name: 'interlock list',
  summary: 'list serial ports (guarded: works without udev)',
  usage: listUsage,
  flags: ['force', 'json'],
  async run(values, io) {
    const listing = await listSerialPorts({ force: values.force });
    if (values.json) printJson(io, listing);
    else {
      if (listing.note) io.stderr(`interlock: ${listing.note}\n`);
      io.stdout(
        listing.ports.length === 0
          ? 'no serial ports found\n'
          : `${listing.ports.map((p) => [p.path, p.manufacturer, p.serialNumber].filter(Boolean).join('  ')).join('\n')}\n`,
      );
    }
    return 0;
  },
});
