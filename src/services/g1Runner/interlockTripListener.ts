import fs from 'node:fs';
import net from 'node:net';

// The runner's ear for the interlock box: a Unix-domain socket on which the interlock keeper (the
// process that owns the box's serial port, docs/INTERLOCK.md §3a) writes one line per e-stop it
// hears, `ESTOP <detail>\n`. It runs on the runner's real-time thread, so an e-stop reaches the
// damping command without the console's process or the runner's bridge thread (docs/G1_RUNNER.md
// "Interlock e-stop"). Any other line is ignored and traced; a line longer than MAX_LINE_BYTES
// closes that connection (a peer that is not the keeper must not grow this thread's memory).

export const INTERLOCK_TRIP_PREFIX = 'ESTOP';
export const MAX_LINE_BYTES = 1024;
/** Connections at once (the keeper holds one; a restarted keeper may briefly hold two). */
const MAX_CONNECTIONS = 4;

export interface InterlockTripListener {
  readonly path: string;
  close(): void;
}

export function listenForInterlockTrips(
  socketPath: string,
  onEstop: (detail: string) => void,
  trace: (line: string) => void,
): Promise<InterlockTripListener> {
  // A socket file left by an earlier runner would refuse the listen (EADDRINUSE): only a socket is
  // removed, never another kind of file.
  try {
    if (fs.lstatSync(socketPath).isSocket()) fs.unlinkSync(socketPath);
  } catch {
    // nothing there
  }
  const server = net.createServer((sock) => {
    let buf = '';
    sock.setEncoding('latin1');
    sock.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line === INTERLOCK_TRIP_PREFIX || line.startsWith(`${INTERLOCK_TRIP_PREFIX} `))
          onEstop(line.slice(INTERLOCK_TRIP_PREFIX.length + 1) || 'e-stop');
        else trace(`g1-runner: interlock socket: ignored a line that is not an e-stop (${line.length} bytes)`);
      }
      if (buf.length > MAX_LINE_BYTES) {
        trace(`g1-runner: interlock socket: a line longer than ${MAX_LINE_BYTES} bytes; connection closed`);
        sock.destroy();
      }
    });
    sock.on('error', () => {});
  });
  server.maxConnections = MAX_CONNECTIONS;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      trace(`g1-runner: listening for the interlock keeper's e-stops on ${socketPath}`);
      resolve({
        path: socketPath,
        close: () => {
          server.close();
          try {
            fs.unlinkSync(socketPath);
          } catch {
            // already gone
          }
        },
      });
    });
  });
}
