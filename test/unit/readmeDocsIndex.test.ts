import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/sharedData';

// The README's "Documentation" section is the index of docs/: every docs/*.md file is listed there
// as `- [Title](docs/NAME.md) — one-line description`, so a new document cannot be left out.

/** The docs/*.md files the index of `readme` does not list with a description, and its entries that point nowhere. */
function indexProblems(readme: string, docFiles: string[]): { missing: string[]; dangling: string[] } {
  const section = /^## Documentation\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1] ?? '';
  const listed = new Set([...section.matchAll(/^- \[[^\]]+\]\(docs\/([^)]+\.md)\) — \S.*$/gm)].map((m) => m[1]));
  return {
    missing: docFiles.filter((f) => !listed.has(f)).sort(),
    dangling: [...listed].filter((f) => !docFiles.includes(f)).sort(),
  };
}

const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const docFiles = fs.readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md'));

describe("README's documentation index", () => {
  it('lists every docs/*.md file with a one-line description, and nothing else', () => {
    expect(docFiles.length).toBeGreaterThan(10);
    expect(indexProblems(readme, docFiles)).toEqual({ missing: [], dangling: [] });
  });

  it('negative controls: a document dropped from the index, one without a description, a stale entry', () => {
    const dropped = readme.replace(/^- \[Console\]\(docs\/CONSOLE\.md\).*\n/m, '');
    expect(dropped).not.toBe(readme);
    expect(indexProblems(dropped, docFiles).missing).toEqual(['CONSOLE.md']);

    const bare = readme.replace(/^(- \[Gap report\]\(docs\/GAP_REPORT\.md\)).*$/m, '$1');
    expect(indexProblems(bare, docFiles).missing).toEqual(['GAP_REPORT.md']);

    // A document outside the section (e.g. only linked from the command-line list) is not indexed.
    expect(indexProblems(readme, [...docFiles, 'NEW.md']).missing).toEqual(['NEW.md']);
    expect(
      indexProblems(
        readme,
        docFiles.filter((f) => f !== 'TRIALS.md'),
      ).dangling,
    ).toEqual(['TRIALS.md']);
  });
});
