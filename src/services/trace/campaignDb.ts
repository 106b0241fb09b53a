// The one SQLite connection of an open campaign, shared by every repository of the store: its
// open/read-only state, the IMMEDIATE transaction every write runs in, and the error mapping that
// names the database. A repository's write that calls another repository's `…In` method runs in
// the caller's transaction (better-sqlite3 nests a transaction opened inside one as a savepoint).

import path from 'node:path';
import type Database from 'better-sqlite3';
import type { CampaignRecord } from '../../domain/trace/records';
import { fromSqliteError, TraceStoreError } from './errors';

export const CAMPAIGN_DB = 'campaign.sqlite';
export const EPISODES_DIR = 'episodes';

export class CampaignDb {
  closed = false;

  constructor(
    /** The campaign folder (absolute). */
    readonly dir: string,
    /** campaign.sqlite in it. */
    readonly dbFile: string,
    readonly db: Database.Database,
    readonly campaign: CampaignRecord,
    readonly readOnly: boolean,
  ) {}

  assertOpen(write: boolean): void {
    if (this.closed) throw new TraceStoreError('state', this.dbFile, `the campaign ${this.dir} is closed`);
    if (write && this.readOnly)
      throw new TraceStoreError('read_only', this.dbFile, `the campaign ${this.dir} was opened read-only`);
  }

  /** Runs fn in an IMMEDIATE transaction; SQLite errors become TraceStoreErrors naming the database. */
  tx<T>(action: string, fn: () => T): T {
    this.assertOpen(true);
    try {
      return this.db.transaction(fn).immediate();
    } catch (err) {
      throw fromSqliteError(err, this.dbFile, action);
    }
  }

  read<T>(action: string, fn: () => T): T {
    this.assertOpen(false);
    try {
      return fn();
    } catch (err) {
      throw fromSqliteError(err, this.dbFile, action);
    }
  }

  /** Absolute path of a file named relative to the campaign folder (as mcap_path is). */
  resolve(relative: string): string {
    return path.join(this.dir, ...relative.split('/'));
  }

  /** A stored JSON column parsed, or a TraceStoreError('corrupt') naming `where` (database, table, row, column). */
  storedJson(text: string, where: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new TraceStoreError(
        'corrupt',
        this.dbFile,
        `${where}: not JSON (${(err as Error).message.split('\n')[0].slice(0, 120)})`,
      );
    }
  }
}
