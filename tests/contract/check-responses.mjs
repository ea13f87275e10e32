// check-responses.mjs — checks logged HTTP exchanges against the OpenAPI
// document.
//
//   node check-responses.mjs [--spec api/openapi.json] LOG.jsonl
//
// LOG holds one exchange a line, as tests/integration/lib.sh writes them
// when HV_CONTRACT_LOG is set:
//   {"method","path","query","status","content_type","body"}
// (body: the parsed JSON answer, or null when it was empty or not JSON).
//
// Each exchange is matched to an operation of the document by method and
// path template; a path parameter must satisfy its schema to match
// (`/api/v1/plans/0` matches no operation, as the server sees it). Then:
//   - the status must be documented for the operation (or `default`);
//   - the content type must be one the response documents, and a response
//     without content must come without a body;
//   - the body must validate against the response's schema (JSON Schema
//     2020-12, formats checked);
//   - a 2xx answer's query parameters must satisfy their schemas, and the
//     operation must declare every one sent (the server accepted them, so
//     the document must too).
// An exchange that matches no operation is fine only when the server
// answered as for an unknown endpoint: 404 `not_found` (no such path),
// 405 `method_not_allowed` (a documented path, another method) or 414
// `uri_too_long` (on any path: an over-long URL is refused before routing),
// as a valid problem document. GETs of the web page's own
// files (200, text/*) outside /api/ are counted apart. Anything else is a
// violation: the server answers on an endpoint the document lacks.
//
// Prints one line per distinct violation (with how many exchanges had it),
// the operations no exchange covered, and the summary line
//   N exchanges checked, M operations covered, K violations
// Exits 1 on any violation (K counts exchanges with at least one), 2 when
// the log or the document cannot be read.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const here = dirname(fileURLToPath(import.meta.url));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const SCHEMA_BASE = 'https://hvbench.dev/api/openapi.json';

function usage(msg) {
  if (msg) console.error(`check-responses: ${msg}`);
  console.error('usage: node check-responses.mjs [--spec OPENAPI.json] LOG.jsonl');
  process.exit(2);
}

let specPath = join(here, '..', '..', 'api', 'openapi.json');
let logPath = null;
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--spec') specPath = process.argv[++i] ?? usage('--spec needs a file');
  else if (a.startsWith('-')) usage(`unknown option ${a}`);
  else if (logPath === null) logPath = a;
  else usage('one log only');
}
if (logPath === null) usage('no log given');

let doc;
try {
  doc = JSON.parse(readFileSync(resolve(specPath), 'utf8'));
} catch (e) {
  usage(`cannot read the document ${specPath}: ${e.message}`);
}

// --- the document ---------------------------------------------------------

/** Resolves an OpenAPI-level $ref (#/components/...) inside the document. */
function deref(obj) {
  let seen = 0;
  while (obj && typeof obj.$ref === 'string') {
    if (!obj.$ref.startsWith('#/') || ++seen > 20) throw new Error(`cannot follow $ref ${obj.$ref}`);
    obj = obj.$ref
      .slice(2)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((o, k) => (o === undefined ? undefined : o[k]), doc);
    if (obj === undefined) throw new Error('dangling $ref');
  }
  return obj;
}

/** A deep copy of schema whose #/components/schemas refs point into the
 *  schema registered under SCHEMA_BASE. */
function rebase(schema) {
  return JSON.parse(
    JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${SCHEMA_BASE}#/$defs/`),
  );
}

// strictSchema stays on, so a misspelt keyword in the document fails here
// instead of silently validating nothing. strictTypes would demand a type
// next to every keyword, strictRequired the properties next to every
// `required`, which allOf refinements (StoredPlan) do not repeat.
const ajv = new Ajv2020({
  allErrors: true,
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
});
addFormats(ajv);
ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
ajv.addSchema({ $id: SCHEMA_BASE, $defs: rebase(doc.components?.schemas ?? {}) });

const compiled = new Map();
/** The validator of schema (cached by identity). */
function validator(schema) {
  if (!compiled.has(schema)) compiled.set(schema, ajv.compile(rebase(schema)));
  return compiled.get(schema);
}

function pathRegex(template) {
  const names = [];
  const src = template
    .split('/')
    .map((seg) => {
      const m = /^\{([^}]+)\}$/.exec(seg);
      if (m) {
        names.push(m[1]);
        return '([^/]+)';
      }
      return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return { re: new RegExp(`^${src}$`), names };
}

/** A query or path value as the type its schema wants. */
function coerce(text, schema) {
  const s = deref(schema ?? {});
  const types = new Set([].concat(s.type ?? []));
  for (const e of s.enum ?? []) types.add(e === null ? 'null' : typeof e);
  if (/^-?(0|[1-9][0-9]*)$/.test(text) && (types.has('integer') || types.has('number'))) {
    // Beyond 64 bits no integer schema can match (JavaScript would round
    // it to one that does).
    const big = BigInt(text);
    return big > 2n ** 63n - 1n || big < -(2n ** 63n) ? text : Number(text);
  }
  if (/^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/.test(text) && types.has('number'))
    return Number(text);
  if ((text === 'true' || text === 'false') && types.has('boolean')) return text === 'true';
  return text;
}

function paramsOf(pathItem, op) {
  const byKey = new Map();
  for (const p of [...(pathItem.parameters ?? []), ...(op.parameters ?? [])]) {
    const r = deref(p);
    byKey.set(`${r.in}:${r.name}`, r);
  }
  return [...byKey.values()];
}

const operations = [];
for (const [template, rawItem] of Object.entries(doc.paths ?? {})) {
  const item = deref(rawItem);
  const { re, names } = pathRegex(template);
  const literal = template.split('/').filter((s) => s && !s.startsWith('{')).length;
  for (const method of METHODS) {
    if (!item[method]) continue;
    const op = item[method];
    operations.push({
      key: `${method.toUpperCase()} ${template}`,
      method: method.toUpperCase(),
      template,
      re,
      names,
      literal,
      op,
      params: paramsOf(item, op),
      seen: 0,
    });
  }
}
// Concrete paths win over templated ones (OpenAPI's rule).
operations.sort((a, b) => b.literal - a.literal);

/** The operations whose template matches path with valid path parameters. */
function pathMatches(path) {
  const out = [];
  for (const o of operations) {
    const m = o.re.exec(path);
    if (!m) continue;
    let ok = true;
    o.names.forEach((name, i) => {
      const p = o.params.find((x) => x.in === 'path' && x.name === name);
      let value;
      try {
        value = decodeURIComponent(m[i + 1]);
      } catch {
        ok = false;
        return;
      }
      if (p?.schema && !validator(p.schema)(coerce(value, p.schema))) ok = false;
    });
    if (ok) out.push(o);
  }
  return out;
}

// --- checking -----------------------------------------------------------------

function mediaType(ct) {
  return (ct ?? '').split(';')[0].trim().toLowerCase();
}

function contentFor(content, ct) {
  const mt = mediaType(ct);
  if (content[mt]) return content[mt];
  const [type] = mt.split('/');
  return content[`${type}/*`] ?? content['*/*'];
}

function schemaErrors(validate) {
  return (validate.errors ?? []).slice(0, 6).map((e) => {
    const where = e.instancePath || '(root)';
    const extra =
      e.keyword === 'additionalProperties'
        ? ` '${e.params.additionalProperty}'`
        : e.keyword === 'enum'
          ? ` ${JSON.stringify(e.params.allowedValues)}`
          : e.keyword === 'const'
            ? ` ${JSON.stringify(e.params.allowedValue)}`
            : '';
    return `${where} ${e.message}${extra}`;
  });
}

/** The errors of a body that failed validate. For a oneOf of alternatives
 *  (POST /api/v1/plans answers 200 with an expansion or a plan), those of
 *  the alternative that came closest, named, instead of all of them. */
function bodyErrors(schema, validate, body) {
  if (!Array.isArray(schema.oneOf)) return schemaErrors(validate);
  let best = null;
  for (const alt of schema.oneOf) {
    const v = validator(alt);
    if (v(body)) return schemaErrors(validate); // more than one matched
    const n = v.errors?.length ?? 0;
    if (best === null || n < best.n) best = { n, alt, errors: schemaErrors(v) };
  }
  const name = best.alt.$ref ? best.alt.$ref.split('/').pop() : 'the closest alternative';
  return best.errors.map((e) => `(as ${name}) ${e}`);
}

const problemValidate = validator({ $ref: '#/components/schemas/Problem' });
const UNKNOWN_ENDPOINT = { 404: 'not_found', 405: 'method_not_allowed', 414: 'uri_too_long' };

/** Problems of one exchange, as strings (empty when it conforms). */
function check(x, counters) {
  const method = String(x.method ?? '').toUpperCase();
  const lookup = method === 'HEAD' ? 'GET' : method;
  const status = Number(x.status);
  const problems = [];
  const candidates = pathMatches(String(x.path ?? ''));
  const o = candidates.find((c) => c.method === lookup);
  // An over-long URL is refused before routing, on any path: 414 is the
  // answer for a documented operation as for an unknown one.
  const tooLong =
    status === 414 &&
    mediaType(x.content_type) === 'application/problem+json' &&
    problemValidate(x.body) &&
    x.body.code === UNKNOWN_ENDPOINT[414] &&
    x.body.status === 414;
  if (tooLong) {
    counters.unknown++;
    return { key: `${method} ${x.path}`, problems };
  }
  if (!o) {
    const expected = candidates.length > 0 ? 405 : [404, 414];
    const fine =
      [].concat(expected).includes(status) &&
      mediaType(x.content_type) === 'application/problem+json' &&
      problemValidate(x.body) &&
      x.body.code === UNKNOWN_ENDPOINT[status] &&
      x.body.status === status;
    if (fine) {
      counters.unknown++;
      return { key: `${method} ${x.path}`, problems };
    }
    const webFile =
      lookup === 'GET' &&
      status === 200 &&
      !String(x.path).startsWith('/api/') &&
      mediaType(x.content_type).startsWith('text/');
    if (webFile) {
      counters.web++;
      return { key: `${method} ${x.path}`, problems };
    }
    problems.push(
      candidates.length > 0
        ? `${status}: the path is documented, the method is not (expected 405 method_not_allowed)`
        : `${status}: matches no operation of the document (expected 404 not_found)`,
    );
    return { key: `${method} ${x.path}`, problems };
  }
  o.seen++;
  const key = o.key;

  if (status >= 200 && status < 300) {
    const query = new URLSearchParams(String(x.query ?? ''));
    for (const name of new Set(query.keys())) {
      const p = o.params.find((q) => q.in === 'query' && q.name === name);
      if (!p) {
        problems.push(`${status}: query parameter '${name}' is not documented`);
        continue;
      }
      for (const v of query.getAll(name)) {
        const validate = validator(p.schema ?? {});
        if (!validate(coerce(v, p.schema)))
          problems.push(
            `${status}: query ${name}=${v} accepted but ${schemaErrors(validate).join('; ')}`,
          );
      }
    }
  }

  const responses = o.op.responses ?? {};
  const raw = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
  if (!raw) {
    problems.push(
      `${status} is not documented (documented: ${Object.keys(responses).join(', ')})` +
        (x.body?.code ? `; body code ${x.body.code}` : ''),
    );
    return { key, problems };
  }
  const resp = deref(raw);
  const content = resp.content ?? {};
  if (Object.keys(content).length === 0) {
    if (x.body !== null || (x.content_type ?? '') !== '')
      problems.push(`${status}: documented without a body, got ${x.content_type || 'a body'}`);
    return { key, problems };
  }
  const media = contentFor(content, x.content_type);
  if (!media) {
    problems.push(
      `${status}: content type '${x.content_type}' is not documented (${Object.keys(content).join(', ')})`,
    );
    return { key, problems };
  }
  if (media.schema) {
    const validate = validator(media.schema);
    if (!validate(x.body)) {
      for (const e of bodyErrors(media.schema, validate, x.body))
        problems.push(`${status}: body ${e}`);
    }
  }
  return { key, problems };
}

// --- main -------------------------------------------------------------------------

let lines;
try {
  lines = readFileSync(resolve(logPath), 'utf8').split('\n');
} catch (e) {
  usage(`cannot read the log ${logPath}: ${e.message}`);
}

const counters = { unknown: 0, web: 0 };
const found = new Map(); // "key: problem" -> {count, firstLine}
let exchanges = 0;
let violating = 0;
lines.forEach((line, i) => {
  if (line.trim() === '') return;
  let x;
  try {
    x = JSON.parse(line);
  } catch (e) {
    found.set(`line ${i + 1}: not a JSON line (${e.message})`, { count: 1, line: i + 1 });
    violating++;
    return;
  }
  exchanges++;
  const { key, problems } = check(x, counters);
  if (problems.length > 0) violating++;
  for (const p of problems) {
    const k = `${key} -> ${p}`;
    const f = found.get(k);
    if (f) f.count++;
    else found.set(k, { count: 1, line: i + 1 });
  }
});

for (const [k, f] of found) {
  console.log(`VIOLATION ${k}  [${f.count} exchange${f.count === 1 ? '' : 's'}, first on line ${f.line}]`);
}
const uncovered = operations.filter((o) => o.seen === 0);
const covered = operations.length - uncovered.length;
if (uncovered.length > 0) {
  console.log(`not covered (${uncovered.length} of ${operations.length} operations):`);
  for (const o of [...uncovered].sort((a, b) => a.template.localeCompare(b.template)))
    console.log(`  ${o.key}`);
}
if (counters.unknown > 0)
  console.log(`${counters.unknown} exchanges answered as unknown endpoints (404/405/414), as they should`);
if (counters.web > 0) console.log(`${counters.web} exchanges fetched the web page's files`);
console.log(`${exchanges} exchanges checked, ${covered} operations covered, ${violating} violations`);
process.exit(violating > 0 ? 1 : 0);
