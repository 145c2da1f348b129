// CouchDB's view-server environment, evaluated once per context. Only what design functions
// need: emit, log, sum, isArray, toJSON, require. Host access is off, so nothing here reaches Java.
(function (global) {
  'use strict';
  // GraalJS's own globals: nothing a design function may use (host access is off regardless).
  for (const name of ['Graal', 'Polyglot', 'Java', 'Packages', 'java', 'javax', 'load', 'loadWithNewGlobal', 'print', 'printErr', 'quit', 'read', 'readbuffer', 'console']) {
    try { delete global[name]; } catch (e) { /* not configurable: fine */ }
  }
  // The host's compiler: the only way to turn source into code here (eval is off, as in couchjs).
  const compileSource = global.__compile;
  delete global.__compile;
  let emits = null;
  let logs = [];

  global.emit = function (key, value) {
    if (emits === null) throw new Error('emit() outside a map function');
    emits.push([key === undefined ? null : key, value === undefined ? null : value]);
  };
  // Nouveau's index(type, name, value, options): only in a context compiled with compileIndexes,
  // elsewhere as undefined as it is in CouchDB's map functions. A field is collected like an emit.
  let indexing = false;
  global.index = function (type, name, value, options) {
    if (!indexing || emits === null) throw new ReferenceError('index is not defined');
    function mustBe(what, expected, v) {
      if (typeof v !== expected) throw new TypeError('type of ' + what + ' must be a ' + expected + ' not ' + typeof v);
    }
    mustBe('type', 'string', type);
    mustBe('name', 'string', name);
    if (name.charAt(0) === '_') throw new Error('index field names must not start with an underscore: ' + name);
    const store = !!(options && options.store);
    switch (type) {
      case 'double':
        mustBe('value', 'number', value);
        break;
      case 'string':
      case 'text':
        mustBe('value', 'string', value);
        break;
      case 'stored':
        if (typeof value !== 'number' && typeof value !== 'string') throw new TypeError('a stored value must be a string or a number, not ' + typeof value);
        break;
      default:
        throw new TypeError('index type ' + type + ' is not supported');
    }
    emits.push([{ t: type, n: name, v: value, s: type === 'stored' || store }, null]);
  };
  global.log = function (msg) {
    logs.push(typeof msg === 'string' ? msg : JSON.stringify(msg));
  };
  global.sum = function (values) {
    let s = 0;
    for (let i = 0; i < values.length; i++) s += values[i];
    return s;
  };
  global.isArray = function (x) { return Array.isArray(x); };
  global.toJSON = function (x) { return JSON.stringify(x); };

  // CouchDB seals the document so one function cannot change what the next one sees.
  // (Object.keys, not for-in: much cheaper in GraalJS's interpreter.)
  function freeze(o) {
    Object.freeze(o);
    const keys = Object.keys(o);
    for (let i = 0; i < keys.length; i++) {
      const v = o[keys[i]];
      if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) freeze(v);
    }
    return o;
  }

  // CommonJS over strings in a JSON tree: require('views/lib/x'), './y', '../z'; modules cached.
  // Failures are CouchDB's: ['error', 'invalid_require_path', ...] for a path that names no
  // module, ['error', 'compilation_error', ...] for a module that throws as it loads.
  function makeRequire(root) {
    function invalid(msg) { return ['error', 'invalid_require_path', msg]; }
    const cache = {};
    function resolve(base, name) {
      const parts = name.startsWith('.') ? base.concat(name.split('/')) : name.split('/');
      const out = [];
      for (const p of parts) {
        if (p === '' || p === '.') continue;
        if (p === '..') {
          if (out.length === 0) throw invalid("require('" + name + "'): invalid path");
          out.pop();
        } else out.push(p);
      }
      return out;
    }
    function requireFrom(base) {
      return function (name) {
        if (typeof name !== 'string') throw invalid('require() needs a module path');
        const path = resolve(base, name);
        const id = path.join('/');
        if (Object.prototype.hasOwnProperty.call(cache, id)) return cache[id].exports;
        let src = root;
        for (const p of path) {
          if (src === null || typeof src !== 'object' || !Object.prototype.hasOwnProperty.call(src, p)) {
            throw invalid("require('" + name + "'): module not found");
          }
          src = src[p];
        }
        if (typeof src !== 'string') throw invalid("require('" + name + "'): not a module");
        const module = { id: id, exports: {} };
        cache[id] = module;
        try {
          const fn = compileSource('(function (module, exports, require) {' + src + '\n})');
          fn(module, module.exports, requireFrom(path.slice(0, -1)));
        } catch (e) {
          delete cache[id];
          if (Array.isArray(e) && e[0] === 'error') throw e;
          throw ['error', 'compilation_error', "Module require('" + name + "') raised error " + message(e)];
        }
        return module.exports;
      };
    }
    return requireFrom([]);
  }

  function compile(src, what) {
    // couchjs takes a function statement followed by ';' too ("function(doc){...};").
    const fn = compileSource('(' + String(src).replace(/[\s;]+$/, '') + ')');
    if (typeof fn !== 'function') throw new TypeError(what + ' is not a function');
    return fn;
  }

  function message(e) {
    if (e && typeof e === 'object' && 'message' in e) return (e.name ? e.name + ': ' : '') + e.message;
    return String(e);
  }

  let maps = [];

  function mapOne(doc) {
    // Sealing only matters when another function sees the same object next; it costs a walk.
    if (maps.length > 1) freeze(doc);
    const out = [];
    for (let i = 0; i < maps.length; i++) {
      emits = [];
      try {
        maps[i](doc);
        out.push(emits);
      } catch (e) {
        out.push({ error: message(e) });
      }
    }
    emits = null;
    return out;
  }
  let reduces = [];
  let filters = null;
  let validate = null;
  let designDoc = null;

  // ---------------------------------------------------------------- shows, lists, updates
  // CouchDB's render protocol: provides()/registerType() pick a responder by ?format= or by the
  // Accept header; start()/send()/getRow() build a response in chunks (lists, and shows that use
  // the list API). Host callbacks (`listIO`) pull rows and take chunks while a list runs.
  const mimesByKey = {};
  const keysByMime = {};
  function registerType(key) {
    const mimes = Array.prototype.slice.call(arguments, 1);
    mimesByKey[key] = mimes;
    for (let i = 0; i < mimes.length; i++) keysByMime[mimes[i]] = key;
  }
  [['all', '*/*'], ['text', 'text/plain; charset=utf-8', 'txt'], ['html', 'text/html; charset=utf-8'],
    ['xhtml', 'application/xhtml+xml', 'xhtml'], ['xml', 'application/xml', 'text/xml', 'application/x-xml'],
    ['js', 'text/javascript', 'application/javascript', 'application/x-javascript'], ['css', 'text/css'],
    ['ics', 'text/calendar'], ['csv', 'text/csv'], ['rss', 'application/rss+xml'], ['atom', 'application/atom+xml'],
    ['yaml', 'application/x-yaml', 'text/yaml'], ['multipart_form', 'multipart/form-data'],
    ['url_encoded_form', 'application/x-www-form-urlencoded'], ['json', 'application/json', 'text/x-json'],
  ].forEach((t) => registerType.apply(null, t));
  global.registerType = registerType;

  let providers = [];
  let responseType = null;
  global.provides = function (key, fn) { providers.push([key, fn]); };

  // A media type as [type, subtype, params]; a range's q defaults to 1 (and to 1 when out of range).
  function parseMedia(s, isRange) {
    const parts = String(s).split(';');
    const params = {};
    for (let i = 1; i < parts.length; i++) {
      const kv = parts[i].split('=');
      if (kv.length === 2) params[kv[0].trim()] = kv[1].trim();
    }
    let full = parts[0].trim();
    if (full === '*') full = '*/*';
    const ts = full.split('/');
    if (isRange) {
      const q = parseFloat(params.q);
      params.q = isNaN(q) || q < 0 || q > 1 ? 1 : q;
    }
    return [ts[0], ts[1], params];
  }
  // The supported type the Accept header likes best (most specific matching range, then its q,
  // then the later in `supported`), or '' if its best range has q=0 or none matches.
  function bestMatch(supported, accept) {
    const ranges = String(accept).split(',').map((r) => parseMedia(r, true));
    let best = null;
    for (let i = 0; i < supported.length; i++) {
      const t = parseMedia(supported[i], false);
      let fit = -1, q = 0;
      for (const r of ranges) {
        if ((r[0] === t[0] || r[0] === '*' || t[0] === '*') && (r[1] === t[1] || r[1] === '*' || t[1] === '*')) {
          let f = (r[0] === t[0] ? 100 : 0) + (r[1] === t[1] ? 10 : 0);
          for (const k of Object.keys(t[2])) if (k !== 'q' && r[2][k] === t[2][k]) f++;
          if (f > fit) { fit = f; q = r[2].q; }
        }
      }
      if (best === null || fit > best.fit || (fit === best.fit && q >= best.q)) best = { fit: fit, q: q, type: supported[i] };
    }
    return best !== null && best.q ? best.type : '';
  }
  function header(req, name) {
    const h = (req && req.headers) || {};
    if (h[name] !== undefined) return h[name];
    const lower = name.toLowerCase();
    for (const k of Object.keys(h)) if (k.toLowerCase() === lower) return h[k];
    return undefined;
  }
  function runProvides(req) {
    const accept = header(req, 'Accept');
    let key;
    if (req.query && req.query.format) {
      key = req.query.format;
      responseType = mimesByKey[key] ? mimesByKey[key][0] : null;
    } else if (accept) {
      let supported = [];
      for (let i = providers.length - 1; i >= 0; i--) if (mimesByKey[providers[i][0]]) supported = supported.concat(mimesByKey[providers[i][0]]);
      responseType = bestMatch(supported, accept);
      key = keysByMime[responseType];
    } else {
      key = providers[0][0];
      responseType = mimesByKey[key] ? mimesByKey[key][0] : null;
    }
    for (let i = 0; i < providers.length; i++) {
      if (providers[i][0] === key) return providers[i][1].call(designDoc);
    }
    const offered = providers.map((p) => (mimesByKey[p[0]] || []).join(', ') || p[0]);
    throw ['error', 'not_acceptable', 'Content-Type ' + (accept || key) + ' not supported, try one of: ' + offered.join(', ')];
  }

  let chunks = [];
  let startResp = {};
  let newHeader = false;
  let gotRow = false;
  let lastRow = false;
  let listIO = null;
  function resetRender() {
    chunks = [];
    startResp = {};
    newHeader = false;
    gotRow = false;
    lastRow = false;
  }
  global.start = function (resp) {
    startResp = resp || {};
    newHeader = true;
  };
  global.send = function (chunk) { chunks.push(String(chunk)); };
  function withType(resp) {
    resp.headers = resp.headers || {};
    if (responseType) resp.headers['Content-Type'] = resp.headers['Content-Type'] || responseType;
    return resp;
  }
  // Hands the chunks so far to the host, with the response head when start() set one since.
  function flush(head) {
    const out = chunks;
    chunks = [];
    listIO.flush(JSON.stringify(out), head === null ? null : JSON.stringify(head));
  }
  global.getRow = function () {
    if (listIO === null) throw ['error', 'render_error', 'getRow() is only for list functions'];
    if (lastRow) return null;
    if (!gotRow) {
      gotRow = true;
      const head = withType(startResp || {});
      startResp = {};
      newHeader = false;
      flush(head);
    } else {
      flush(newHeader ? startResp : null);
      newHeader = false;
    }
    const row = listIO.next();
    if (row === null) {
      lastRow = true;
      return null;
    }
    return JSON.parse(row);
  };
  function wrap(resp) { return typeof resp === 'string' ? { body: resp } : resp; }
  function typeName(v) { return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v; }
  // What the host gets for a failure: CouchDB's [error, reason]. A thrown ['error', e, r] or
  // {error, reason} is the function's own answer; anything else is a render_error.
  function failure(e, kind) {
    if (Array.isArray(e) && (e[0] === 'error' || e[0] === 'fatal')) return [String(e[1]), typeof e[2] === 'string' ? e[2] : JSON.stringify(e[2])];
    if (e && typeof e === 'object' && e.error && e.reason) return [String(e.error), typeof e.reason === 'string' ? e.reason : JSON.stringify(e.reason)];
    let what;
    if (e instanceof Error) what = e.name + ': ' + e.message;
    else {
      try { what = JSON.stringify(e); } catch (x) { what = String(e); }
    }
    log('function raised error: ' + what);
    return [kind, 'function raised error: ' + what + ' \nstacktrace: ' + (e && e.stack ? e.stack : '')];
  }
  const compiled = {};
  function designFunction(group, name) {
    const id = group + '\u0000' + name;
    if (compiled[id]) return compiled[id];
    const members = designDoc[group];
    const src = members !== null && typeof members === 'object' ? members[name] : undefined;
    if (!src) throw ['error', 'not_found', 'missing ' + group + ' function ' + name + ' on design doc ' + designDoc._id];
    try {
      compiled[id] = compile(src, group + '.' + name);
    } catch (e) {
      throw ['error', 'compilation_error', message(e) + ' (' + src + ')'];
    }
    return compiled[id];
  }
  function runShow(name, doc, req) {
    resetRender();
    providers = [];
    responseType = null;
    try {
      const fn = designFunction('shows', name);
      let resp = wrap(fn.call(designDoc, doc, req) || {});
      if (chunks.length > 0) {
        resp.headers = resp.headers || {};
        for (const h in startResp) resp.headers[h] = startResp[h];
        resp.body = chunks.join('') + (resp.body || '');
        resetRender();
      }
      if (providers.length > 0) {
        const provided = wrap(runProvides(req) || {});
        resp.body = (resp.body || '') + chunks.join('') + (provided.body || '');
        resp = withType(resp);
        resetRender();
      }
      const t = typeName(resp);
      if (t !== 'object' && t !== 'string') throw ['error', 'render_error', 'undefined response from show function'];
      return wrap(resp);
    } catch (e) {
      // A show of a document that is not there answers 404 whatever went wrong.
      if (doc === null && req.path && req.path.length > 5) throw ['error', 'not_found', 'document not found'];
      throw e;
    }
  }
  function runUpdate(name, doc, req) {
    if (req.method === 'GET') throw ['error', 'method_not_allowed', 'Update functions do not allow GET'];
    const result = designFunction('updates', name).call(designDoc, doc, req);
    const resp = result[1];
    const t = typeName(resp);
    if (t !== 'object' && t !== 'string') throw ['error', 'render_error', 'undefined response from update function'];
    return [result[0] === undefined ? null : result[0], wrap(resp)];
  }
  function runList(name, head, req) {
    resetRender();
    providers = [];
    responseType = null;
    let tail = designFunction('lists', name).call(designDoc, head, req);
    if (providers.length > 0) tail = runProvides(req);
    if (!gotRow) global.getRow();
    if (tail !== undefined) chunks.push(String(tail));
    flush(newHeader ? startResp : null);
  }
  // The design document's `rewrites` function: the new path (a string becomes {path, method}),
  // or null when it has no rule for the request.
  function runRewrite(req) {
    if (!compiled['\u0000rewrites']) {
      try {
        compiled['\u0000rewrites'] = compile(designDoc.rewrites, 'rewrites');
      } catch (e) {
        throw ['error', 'compilation_error', message(e) + ' (' + designDoc.rewrites + ')'];
      }
    }
    let result;
    try {
      result = compiled['\u0000rewrites'].call(designDoc, req);
    } catch (e) {
      const f = failure(e, 'rewrite_error');
      throw ['error', f[0], f[1]];
    }
    if (!result) return null;
    return typeof result === 'string' ? { path: result, method: req.method } : result;
  }
  // One call of a render function: '{"ok": result}' or '{"fail": [error, reason]}'.
  function render(run, kind) {
    try {
      const r = run();
      const s = JSON.stringify({ ok: r === undefined ? null : r });
      return s;
    } catch (e) {
      return JSON.stringify({ fail: failure(e, kind) });
    } finally {
      resetRender();
    }
  }

  // CoffeeScript's compiler (npm's coffee-script lib/ modules), in contexts that only compile it.
  let coffeeScript = null;

  global.__chaise = {
    loadCoffee: function (modulesJson) {
      const files = JSON.parse(modulesJson);
      const loaded = {};
      // What it requires of node's modules is only used by its run/eval/register, never by compile.
      const stubs = { fs: {}, vm: {}, path: {}, module: {}, '../../package.json': { version: files.version } };
      function load(name) {
        if (Object.prototype.hasOwnProperty.call(stubs, name)) return stubs[name];
        const file = name.replace(/^\.\//, '');
        if (Object.prototype.hasOwnProperty.call(loaded, file)) return loaded[file].exports;
        const src = files[file + '.js'];
        if (typeof src !== 'string') throw new Error('coffee-script: no module ' + name);
        const module = { exports: {} };
        loaded[file] = module;
        compileSource('(function (exports, require, module, __filename, __dirname) {' + src + '\n})')(module.exports, load, module, file, '.');
        return module.exports;
      }
      coffeeScript = load('./coffee-script');
    },
    // CouchDB's util.js: CoffeeScript.compile(source, {bare: true}), then evaluated as a function.
    coffee: function (src) {
      try {
        return JSON.stringify({ js: coffeeScript.compile(String(src), { bare: true }) });
      } catch (e) {
        return JSON.stringify({ error: message(e) });
      }
    },
    init: function (rootJson) {
      global.require = makeRequire(JSON.parse(rootJson));
    },
    check: function (src) {
      compile(src, 'function');
    },
    compileMaps: function (sources) {
      maps = JSON.parse(sources).map((s, i) => compile(s, 'map function ' + i));
    },
    compileIndexes: function (sources) {
      indexing = true;
      maps = JSON.parse(sources).map((s, i) => compile(s, 'index function ' + i));
    },
    compileReduces: function (sources) {
      reduces = JSON.parse(sources).map((s, i) => compile(s, 'reduce function ' + i));
    },
    setFilters: function (json) {
      filters = JSON.parse(json);
    },
    // One document through every map function: [[emits...] | {"error": msg}, ...], plus log lines.
    map: function (docJson) {
      const out = mapOne(JSON.parse(docJson));
      const l = logs;
      logs = [];
      return JSON.stringify({ r: out, l: l });
    },
    // Many documents (a JSON array) in one crossing: {r: [per doc: [per view ...]], l: logs}.
    mapAll: function (docsJson) {
      const docs = JSON.parse(docsJson);
      const out = new Array(docs.length);
      for (let d = 0; d < docs.length; d++) out[d] = mapOne(docs[d]);
      const l = logs;
      logs = [];
      return JSON.stringify({ r: out, l: l });
    },
    // The reduction as JSON; a non-fatal throw reduces to null as in couchjs, returned as "\0" +
    // message so the caller can log it without another crossing.
    reduce: function (i, keysJson, valuesJson, rereduce) {
      let v;
      try {
        v = reduces[i](rereduce ? null : JSON.parse(keysJson), JSON.parse(valuesJson), rereduce);
      } catch (e) {
        if (e === 'fatal_error' || (Array.isArray(e) && e[0] === 'fatal')) throw e;
        return '\u0000' + message(e);
      }
      const s = JSON.stringify(v === undefined ? null : v);
      return s === undefined ? 'null' : s;
    },
    hasFilter: function (name) {
      return filters !== null && typeof filters === 'object' && Object.prototype.hasOwnProperty.call(filters, name);
    },
    compileFilter: function (name) {
      if (typeof filters[name] === 'string') filters[name] = compile(filters[name], 'filter ' + name);
      else if (typeof filters[name] !== 'function') throw new TypeError('filter ' + name + ' is not a function');
    },
    filter: function (name, docJson, reqJson) {
      try {
        return !!filters[name](freeze(JSON.parse(docJson)), JSON.parse(reqJson));
      } catch (e) {
        throw new Error('filter ' + name + ' threw: ' + message(e)); // fails the request, as in CouchDB
      }
    },
    // validate_doc_update, called with the design document as `this`, as couchjs does.
    compileValidate: function (ddocJson) {
      designDoc = JSON.parse(ddocJson);
      validate = compile(designDoc.validate_doc_update, 'validate_doc_update');
    },
    // "" if it passed; otherwise what it threw, as JSON. An Error (a bug in the function, not a
    // verdict) propagates, as in couchjs.
    validate: function (newJson, oldJson, ctxJson, secJson) {
      try {
        validate.call(designDoc, JSON.parse(newJson), JSON.parse(oldJson), JSON.parse(ctxJson), JSON.parse(secJson));
        return '';
      } catch (e) {
        if (e && e.name && e.stack) throw e;
        const s = JSON.stringify(e === undefined ? null : e);
        return s === undefined ? 'null' : s;
      }
    },
    // Shows, lists and updates of one design document, which is `this` in each.
    setDesign: function (ddocJson) {
      designDoc = JSON.parse(ddocJson);
    },
    show: function (name, docJson, reqJson) {
      return render(() => runShow(name, JSON.parse(docJson), JSON.parse(reqJson)), 'render_error');
    },
    update: function (name, docJson, reqJson) {
      return render(() => runUpdate(name, JSON.parse(docJson), JSON.parse(reqJson)), 'render_error');
    },
    rewrite: function (reqJson) {
      return render(() => runRewrite(JSON.parse(reqJson)), 'rewrite_error');
    },
    // next(): the next row as JSON, or null; flush(chunksJson, headJson | null).
    list: function (name, headJson, reqJson, next, flushTo) {
      listIO = { next: next, flush: flushTo };
      try {
        return render(() => runList(name, JSON.parse(headJson), JSON.parse(reqJson)), 'render_error');
      } finally {
        listIO = null;
      }
    },
    logs: function () {
      const l = logs;
      logs = [];
      return JSON.stringify(l);
    },
  };
})(globalThis);
