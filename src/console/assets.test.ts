import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureConsoleAssets, filterTopLevelRules } from './assets.js';

describe('console assets', () => {
  it('keeps the top-level rules asked for, nested blocks whole', () => {
    const css = '@font-face {\n  src: url("x.woff2");\n}\n.a { color: red; }\n@media (min-width: 1px) {\n  .b { color: blue; }\n}\n:root:where(.pf-v6-theme-dark) { --x: 1; }\n';
    const out = filterTopLevelRules(css, (p) => !/@font-face|pf-v6-theme-/.test(p));
    assert.equal(out, '.a { color: red; }\n@media (min-width: 1px) {\n  .b { color: blue; }\n}');
  });

  it("bundles PatternFly's CSS and the console's own into app.css, with nothing fetched by url()", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'binnacle-assets-'));
    try {
      await ensureConsoleAssets({ outDir: dir, force: true });
      const css = await readFile(join(dir, 'app.css'), 'utf8');
      for (const cls of ['.pf-v6-c-button', '.pf-v6-c-card', '.pf-v6-c-label', '.pf-v6-c-table', '.pf-v6-c-alert', '.pf-v6-c-form-control', '.pf-v6-c-title', '.pf-v6-c-empty-state', '.pf-v6-c-toolbar', '.pf-v6-c-tabs', '.pf-v6-c-description-list', 'svg.graph']) assert.ok(css.includes(cls), cls);
      assert.doesNotMatch(css, /url\(|@font-face|@import|pf-v6-theme-dark/);
      // Its cost, minified: PatternFly's components are most of it.
      assert.ok(css.length < 600_000, `app.css is ${css.length} bytes`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
