import { describe, expect, it } from 'vitest';
import { formatAgo, problemView } from '../../renderer/src/connections/problemView';

const at = 1_000_000;
const problem = (code: string, severity: 'info' | 'warn' | 'error' = 'warn') => ({
  severity,
  code,
  message: `${code} message`,
  atMs: at,
});

describe('Connections panel: how the latest problem reads', () => {
  it('shows a link silence as past while the link is present again, and as itself while it is not', () => {
    for (const code of ['link_stale', 'link_lost', 'connect_failed']) {
      expect(problemView(problem(code), 'present', at + 5000).tone).toBe('past');
      expect(problemView(problem(code, 'error'), 'lost', at + 5000).tone).toBe('error');
      expect(problemView(problem(code), 'stale', at + 5000).tone).toBe('warn');
      expect(problemView(problem(code), 'connecting', at + 5000).tone).toBe('warn');
    }
  });

  it('keeps every other problem at its severity whatever the presence (a dropped frame stays a warning)', () => {
    expect(problemView(problem('malformed_frame'), 'present', at + 1).tone).toBe('warn');
    expect(problemView(problem('unsupported_contract', 'error'), 'present', at + 1).tone).toBe('error');
    expect(problemView(problem('server_status', 'info'), 'present', at + 1).tone).toBe('info');
  });

  it('gives the age from the wall-clock stamp; none for an unstamped problem; a clock step back reads as just now', () => {
    expect(problemView(problem('link_stale'), 'present', at + 12_400).age).toBe('12 s ago');
    expect(problemView({ ...problem('backend_unavailable', 'error'), atMs: 0 }, 'disconnected', at).age).toBeNull();
    expect(problemView(problem('link_stale'), 'present', at - 3000).age).toBe('just now');
  });

  it('formats ages across units', () => {
    expect(formatAgo(999)).toBe('just now');
    expect(formatAgo(59_999)).toBe('59 s ago');
    expect(formatAgo(60_000)).toBe('1 min ago');
    expect(formatAgo(3_599_999)).toBe('59 min ago');
    expect(formatAgo(3_600_000 + 5 * 60_000)).toBe('1 h 5 min ago');
  });
});
