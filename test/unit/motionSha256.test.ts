import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Sha256, sha256, sha256Hex, sha256HexOfString } from '../../src/domain/hash/sha256';

const nodeHex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const enc = (s: string) => new TextEncoder().encode(s);

describe('sha256 (pure TypeScript)', () => {
  it('matches the FIPS 180-4 vectors', () => {
    expect(sha256Hex(new Uint8Array(0))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex(enc('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256HexOfString('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
    expect(sha256Hex(enc('a'.repeat(1_000_000)))).toBe(
      'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0',
    );
  });

  it('agrees with node:crypto on every length around the block and padding boundaries', () => {
    for (let n = 0; n <= 200; n++) {
      const b = new Uint8Array(n).map((_, i) => (i * 31 + n) & 0xff);
      expect(sha256Hex(b), `length ${n}`).toBe(nodeHex(b));
    }
  });

  it('agrees with node:crypto on 1 MB of pseudo-random bytes, one-shot and incremental', () => {
    const b = new Uint8Array(1 << 20);
    let s = 12345;
    for (let i = 0; i < b.length; i++) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      b[i] = s >>> 24;
    }
    const expected = nodeHex(b);
    expect(sha256Hex(b)).toBe(expected);
    const h = new Sha256();
    for (let off = 0; off < b.length;) {
      const n = Math.min(1 + ((off * 7) % 997), b.length - off);
      h.update(b.subarray(off, off + n));
      off += n;
    }
    expect(h.digestHex()).toBe(expected);
    expect(Buffer.from(sha256(b)).toString('hex')).toBe(expected);
  });

  it('refuses to be reused after digest', () => {
    const h = new Sha256().update(enc('x'));
    h.digest();
    expect(() => h.update(enc('y'))).toThrow();
  });
});
