// CouchDB's view-server environment, evaluated once per context. Only what design functions
// need: emit, log, sum, isArray, toJSON, require. Host access is off, so nothing here reaches Java.
(function (global) {
  'use strict';
  // GraalJS's own globals: nothing a design function may use (host access is off regardless).
  for (const name of ['Graal', 'Polyglot', 'Java', 'Packages', 'java', 'javax', 'load', 'loadWithNewGlobal', 'print', 'printErr', 'quit', 'read', 'readbuffer', 'console']) {
    try { delete global[name]; } catch (e) { /* not configurable: fine */ }
  }
  let emits = null;
  let logs = [];

  global.emit = function (key, value) {
    if (emits === null) throw new Error('emit() outside a map function');
    emits.push([key === undefined ? null : key, value === undefined ? null : value]);
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
  function makeRequire(root) {
    const cache = {};
    function resolve(base, name) {
      const parts = name.startsWith('.') ? base.concat(name.split('/')) : name.split('/');
      const out = [];
      for (const p of parts) {
        if (p === '' || p === '.') continue;
        if (p === '..') {
          if (out.length === 0) throw new Error("require('" + name + "'): invalid path");
          out.pop();
        } else out.push(p);
      }
      return out;
    }
    function requireFrom(base) {
      return function (name) {
        if (typeof name !== 'string') throw new Error('require() needs a module path');
        const path = resolve(base, name);
        const id = path.join('/');
        if (Object.prototype.hasOwnProperty.call(cache, id)) return cache[id].exports;
        let src = root;
        for (const p of path) {
          if (src === null || typeof src !== 'object' || !Object.prototype.hasOwnProperty.call(src, p)) {
            throw new Error("require('" + name + "'): module not found");
          }
          src = src[p];
        }
        if (typeof src !== 'string') throw new Error("require('" + name + "'): not a module");
        const module = { id: id, exports: {} };
        cache[id] = module;
        const fn = (0, eval)('(function (module, exports, require) {' + src + '\n})');
        fn(module, module.exports, requireFrom(path.slice(0, -1)));
        return module.exports;
      };
    }
    return requireFrom([]);
  }

  function compile(src, what) {
    // couchjs takes a function statement followed by ';' too ("function(doc){...};").
    const fn = (0, eval)('(' + String(src).replace(/[\s;]+$/, '') + ')');
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

  global.__chaise = {
    init: function (rootJson) {
      global.require = makeRequire(JSON.parse(rootJson));
    },
    check: function (src) {
      compile(src, 'function');
    },
    compileMaps: function (sources) {
      maps = JSON.parse(sources).map((s, i) => compile(s, 'map function ' + i));
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
    logs: function () {
      const l = logs;
      logs = [];
      return JSON.stringify(l);
    },
  };
})(globalThis);
