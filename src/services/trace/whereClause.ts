// WHERE clauses of the store's reads.

/** A WHERE clause built from optional filters (values always bound, never spliced). */
export class Where {
  private readonly conds: string[] = [];
  readonly args: unknown[] = [];
  /** Adds `cond` (with `?` placeholders) when `value` is not undefined. */
  when(value: unknown, cond: string): this {
    if (value !== undefined) {
      this.conds.push(cond);
      this.args.push(value);
    }
    return this;
  }
  raw(cond: string): this {
    this.conds.push(cond);
    return this;
  }
  get sql(): string {
    return this.conds.length ? `WHERE ${this.conds.join(' AND ')}` : '';
  }
}
