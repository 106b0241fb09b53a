import { read as fsRead } from 'node:fs';
import { SerialPort } from 'serialport';
import { INTERLOCK_PROTOCOL } from '../../domain/interlock';

// serialport's Linux binding retries a read that returns 0 bytes, at once and forever. On a
// terminal, a non-blocking read with no data fails with EAGAIN; 0 bytes means end of file: the
// device hung up (USB-serial unplugged, the pty's other side gone). The stock binding then
// spins on 0-byte reads and the hang-up is only noticed at the next failing write (≤ one
// heartbeat, 20 ms). This binding wraps the stock one and turns a 0-byte read (and EIO) into a
// disconnect, so the port closes — and the interlock trips — within a millisecond or so.
//
// It relies on the Linux port binding's `fd`, `isOpen` and `poller` (serialport 13); where they
// are absent (other platforms, other versions) the stock read is kept unchanged.

type StockBinding = typeof SerialPort.binding;
type StockPort = Awaited<ReturnType<StockBinding['open']>>;

interface LinuxPortInternals {
  fd: number | null;
  isOpen: boolean;
  poller?: { once(event: 'readable', cb: (err: Error | null) => void): unknown };
}

const readOnce = (fd: number, buffer: Buffer, offset: number, length: number): Promise<number> =>
  new Promise((resolve, reject) =>
    fsRead(fd, buffer, offset, length, null, (err, n) => (err ? reject(err) : resolve(n))),
  );

const canceled = (): Error => Object.assign(new Error('Port is not open'), { canceled: true });

function wrapRead(port: StockPort): StockPort {
  const p = port as unknown as LinuxPortInternals & StockPort;
  if (process.platform !== 'linux' || typeof p.fd !== 'number' || !p.poller || typeof p.poller.once !== 'function')
    return port;
  const poller = p.poller;
  p.read = async (buffer: Buffer, offset: number, length: number) => {
    for (;;) {
      if (!p.isOpen || p.fd === null) throw canceled();
      try {
        const bytesRead = await readOnce(p.fd, buffer, offset, length);
        if (bytesRead === 0)
          throw Object.assign(new Error('the device hung up (end of file)'), { code: 'EIO', disconnect: true });
        return { bytesRead, buffer };
      } catch (err) {
        const e = err as NodeJS.ErrnoException & { disconnect?: boolean };
        if (e.code === 'EAGAIN' || e.code === 'EWOULDBLOCK' || e.code === 'EINTR') {
          if (!p.isOpen) throw canceled();
          await new Promise<void>((resolve, reject) =>
            poller.once('readable', (pollErr: Error | null) => (pollErr ? reject(pollErr) : resolve())),
          );
          continue;
        }
        if (e.code === 'EIO' || e.code === 'EBADF' || e.code === 'ENXIO' || e.code === 'ENODEV') e.disconnect = true;
        throw e;
      }
    }
  };
  return port;
}

/** The stock serialport binding with hang-up detection on reads (see above). */
export const hangupAwareBinding: StockBinding = {
  ...SerialPort.binding,
  list: () => SerialPort.binding.list(),
  async open(options: Parameters<StockBinding['open']>[0]) {
    return wrapRead(await SerialPort.binding.open(options));
  },
} as StockBinding;

export type SerialOptions = ConstructorParameters<typeof SerialPort>[0];

/** A SerialPort (not yet open: pass autoOpen false) on the hang-up-aware binding. */
export function createSerialPort(options: SerialOptions): SerialPort {
  // SerialPort's constructor spreads the caller's options over its default binding.
  return new SerialPort({ ...options, binding: hangupAwareBinding } as SerialOptions);
}

/**
 * Opens the interlock line at `path` as both ends of it speak: `baudRate` (default the protocol's),
 * 8N1, no flow control, through the hang-up-aware binding. `lock` (the exclusive device lock)
 * keeps serialport's default when absent. The error names `who` opened it.
 */
export async function openInterlockSerial(
  o: { path: string; baudRate?: number; lock?: boolean },
  who: string,
): Promise<SerialPort> {
  const port = createSerialPort({
    path: o.path,
    baudRate: o.baudRate ?? INTERLOCK_PROTOCOL.baudRate,
    dataBits: 8,
    parity: 'none',
    stopBits: 1,
    rtscts: false,
    autoOpen: false,
    ...(o.lock !== undefined ? { lock: o.lock } : {}),
  });
  await new Promise<void>((resolve, reject) =>
    port.open((err) => (err ? reject(new Error(`${who}: cannot open ${o.path}: ${err.message}`)) : resolve())),
  );
  return port;
}
