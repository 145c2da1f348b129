// Fauxton, served by Chaise at /_utils/, driven through a whole session in headless Chromium
// (Debian's chromium through playwright-core): log in, create a database, create, edit and delete
// a document, create a view and query it, run a Mango query, edit permissions, look at the
// changes, log out. Each screen is saved under target/fauxton/. Any console error, page error, or
// failed request the step did not expect fails the test.
// Run by FauxtonBrowserTest (src/test/java), which starts the server and finds Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';

const url = process.env.CHAISE_URL;
const admin = process.env.CHAISE_ADMIN;
const password = process.env.CHAISE_PASSWORD;
const executablePath = process.env.CHROMIUM;
const shots = 'target/fauxton';

test('a Fauxton session from log-in to log-out', { timeout: 180_000 }, async () => {
  mkdirSync(shots, { recursive: true });
  const browser = await chromium.launch({
    executablePath,
    // --headless is added by playwright; a fresh profile directory comes with each launch.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const problems = [];
  const expected = [];   // [method, path regexp, status] the current step expects
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.on('pageerror', e => problems.push(`page error: ${e.message}`));
    page.on('console', m => {
      if (m.type() !== 'error') return;
      // Chromium also reports an HTTP error status as a console error; those are judged below.
      if (/Failed to load resource: the server responded with a status of/.test(m.text())) return;
      problems.push(`console error: ${m.text()}`);
    });
    page.on('requestfailed', r => problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`));
    page.on('response', r => {
      if (r.status() < 400) return;
      const path = new URL(r.url()).pathname;
      if (expected.some(([m, p, s]) => m === r.request().method() && p.test(path) && s === r.status())) return;
      problems.push(`HTTP ${r.status()} for ${r.request().method()} ${r.url()}`);
    });

    let n = 0;
    const screen = async (name) => {
      await page.waitForTimeout(300);
      await page.screenshot({ path: `${shots}/${String(++n).padStart(2, '0')}-${name}.png` });
      assert.deepEqual(problems, [], `after ${name}`);
    };
    // Fauxton's React buttons are clicked as a user's click reaches them: on the element itself.
    const press = (selector) => page.locator(selector).first().evaluate(e => e.click());
    const setEditor = async (scope, text) => {
      await page.click(`${scope} .ace_content`);
      await page.keyboard.press('Control+A');
      await page.keyboard.press('Delete');
      await page.keyboard.insertText(text);
    };
    const api = async (path) => {
      const r = await page.request.get(url + path);
      return { status: r.status(), body: await r.json() };
    };
    // Waits until the server has what the screen just did: a toast from an earlier step may still
    // show, so the screen alone does not say the request has been answered. (page.request is not
    // the page's own traffic, so its 404s while waiting are not the page's failed requests.)
    const until = async (what, check) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        if (await check()) return;
        assert.ok(Date.now() < deadline, `the server never saw: ${what}`);
        await page.waitForTimeout(100);
      }
    };
    const db = `fauxton-${Date.now()}`;

    // Log in.
    await page.goto(url + '/_utils');
    await page.waitForSelector('#username');
    await screen('login');
    await page.fill('#username', admin);
    await page.fill('#password', password);
    await press('#submit');
    await page.waitForSelector('.add-new-database-btn');
    await page.waitForSelector('text=_users');
    await screen('databases');

    // Create a database.
    await press('.add-new-database-btn');
    await page.fill('#js-new-database-name', db);
    // GET / lists "partitioned", so Fauxton asks which kind, as it does of CouchDB 3.5
    await page.check('#non-partitioned-db');
    await press('#js-create-database');
    await page.waitForURL(new RegExp(`#database/${db}/_all_docs`));
    await page.waitForSelector('.document-result-screen__toolbar-create-btn');
    await screen('new-database');
    assert.equal((await api(`/${db}`)).status, 200);

    // Create a document.
    await press('.document-result-screen__toolbar-create-btn');
    await page.waitForSelector('.save-doc');
    await setEditor('', '{"_id": "doc1", "name": "first", "n": 1}');
    await screen('new-document');
    await press('.save-doc');
    await until('doc1 created', async () => (await api(`/${db}/doc1`)).body.name === 'first');
    await page.waitForURL(/\/_all_docs$/); // Fauxton's own navigation after a save, before ours
    await page.waitForSelector('text=Document saved successfully.');
    await screen('document-saved');

    // Edit it.
    await page.goto(`${url}/_utils/#database/${db}/doc1`);
    await page.waitForSelector('text=Save Changes');
    await page.waitForFunction(() => document.querySelector('.ace_content')?.innerText.includes('"_rev"'));
    const doc = JSON.parse(await page.evaluate(() => document.querySelector('.ace_content').innerText));
    doc.name = 'edited';
    await setEditor('', JSON.stringify(doc, null, 2));
    await screen('edit-document');
    await press('.save-doc');
    await until('doc1 edited', async () => (await api(`/${db}/doc1`)).body.name === 'edited');
    await page.waitForURL(/\/_all_docs$/);
    assert.match((await api(`/${db}/doc1`)).body._rev, /^2-/);

    // Create a second document and delete it.
    await page.goto(`${url}/_utils/#database/${db}/_new`);
    await page.waitForSelector('.save-doc');
    await setEditor('', '{"_id": "doomed", "x": 1}');
    await press('.save-doc');
    await until('doomed created', async () => (await api(`/${db}/doomed`)).status === 200);
    await page.waitForURL(/\/_all_docs$/);
    await page.goto(`${url}/_utils/#database/${db}/doomed`);
    await page.waitForSelector('button.panel-button:has-text("Delete")');
    await press('button.panel-button:has-text("Delete")');
    await page.waitForSelector('button.btn-primary:has-text("Delete Document")');
    await screen('delete-document');
    expected.push(['GET', new RegExp(`^/${db}/doomed$`), 404]);
    await press('button.btn-primary:has-text("Delete Document")');
    await until('doomed deleted', async () => (await api(`/${db}/doomed`)).status === 404);
    await page.waitForSelector('text=Your document has been successfully deleted.');
    expected.length = 0;

    // Create a view and query it.
    await page.goto(`${url}/_utils/#database/${db}/new_view`);
    await page.waitForSelector('#save-view');
    await page.fill('#new-ddoc', 'app');
    await page.fill('#index-name', 'by_name');
    await setEditor('#map-function', 'function (doc) { if (doc.name) { emit(doc.name, doc.n); } }');
    await page.selectOption('#reduce-function-selector', '_sum');
    await screen('new-view');
    await press('#save-view');
    await page.waitForURL(new RegExp(`#database/${db}/_design/app/_view/by_name`));
    await page.waitForSelector('text=edited');
    await screen('view-results');
    const view = await api(`/${db}/_design/app/_view/by_name?reduce=false`);
    assert.deepEqual(view.body.rows.map(r => [r.key, r.value]), [['edited', 1]]);

    // Run a Mango query (on the _all_docs index: Chaise has no Mango indexes yet).
    await page.goto(`${url}/_utils/#database/${db}/_find`);
    await page.waitForSelector('#create-index-btn');
    await setEditor('', '{"selector": {"name": "edited"}}');
    await press('#create-index-btn');
    await page.waitForFunction(() => /doc1/.test(document.querySelector('table')?.innerText ?? ''));
    await screen('mango-results');

    // Edit permissions: a member name.
    await page.goto(`${url}/_utils/#database/${db}/permissions`);
    await page.waitForSelector('input[placeholder="Username"]');
    await screen('permissions');
    await page.locator('input[placeholder="Username"]').nth(1).fill('alice');
    await page.locator('button:has-text("Add User")').nth(1).evaluate(e => e.click());
    await until('alice a member', async () => JSON.stringify((await api(`/${db}/_security`)).body.members?.names) === '["alice"]');
    await page.waitForSelector('text=Database permissions has been updated.');
    await screen('permissions-saved');

    // Look at the changes.
    await page.goto(`${url}/_utils/#database/${db}/_changes`);
    await page.waitForSelector('text=doomed');
    await page.waitForSelector('text=_design/app');
    await screen('changes');

    // Log out.
    await page.locator('a:has-text("Log Out"), button:has-text("Log Out")').first().evaluate(e => e.click());
    await page.waitForSelector('#username');
    await screen('logged-out');
    const session = await api('/_session');
    assert.equal(session.body.userCtx.name, null);
  } finally {
    await browser.close();
  }
  assert.deepEqual(problems, []);
});
