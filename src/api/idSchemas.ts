import { z } from 'zod';

// The ids requests carry, each declared once: a bounded, non-empty string of a fixed pattern.

/** A non-empty string of at most `maxLength` characters matching `pattern` (`message` when it does not). */
export const idSchema = (pattern: RegExp, message: string, maxLength = 64) =>
  z.string().min(1).max(maxLength).regex(pattern, message);

export const connectionIdSchema = idSchema(/^[a-z0-9-]+$/, 'not a connection id');
export const runIdSchema = idSchema(/^[\w.:-]+$/, 'not a run id', 128);
