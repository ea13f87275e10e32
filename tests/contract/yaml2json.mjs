// yaml2json.mjs — api/openapi.yaml → api/openapi.json.
//
//   node yaml2json.mjs [IN.yaml [OUT.json]]
//
// Defaults to the repository's api/openapi.yaml and api/openapi.json. The
// YAML is read with the YAML 1.2 core schema (so `on`, `off`, `yes` and
// dates stay strings) and refused when it holds anything JSON cannot say
// (non-finite numbers, non-string keys). The JSON keeps the YAML's key
// order, so the output is stable: the same YAML always gives the same bytes
// (2-space indent, trailing newline). `make api` runs this; the committed
// api/openapi.json is what the server embeds.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, load } from 'js-yaml';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const input = process.argv[2] ?? join(root, 'api', 'openapi.yaml');
const output = process.argv[3] ?? join(root, 'api', 'openapi.json');

/** Throws when v holds a value that has no exact JSON form. */
function checkJson(v, path) {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`${path}: ${v} has no JSON form`);
    if (Number.isInteger(v) && !Number.isSafeInteger(v))
      throw new Error(`${path}: ${v} is beyond 2^53 and would lose digits`);
    return;
  }
  if (Array.isArray(v)) {
    v.forEach((x, i) => checkJson(x, `${path}/${i}`));
    return;
  }
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    for (const [k, x] of Object.entries(v)) checkJson(x, `${path}/${k}`);
    return;
  }
  throw new Error(`${path}: a ${typeof v} (${Object.prototype.toString.call(v)}) is not JSON`);
}

try {
  const doc = load(readFileSync(input, 'utf8'), { schema: CORE_SCHEMA, filename: input });
  checkJson(doc, '');
  const text = JSON.stringify(doc, null, 2) + '\n';
  // An unchanged document is left alone, so make does not rebuild the
  // server for nothing; a changed one is written aside and renamed, so a
  // failed run never leaves half a file.
  if (!existsSync(output) || readFileSync(output, 'utf8') !== text) {
    const tmp = `${output}.tmp${process.pid}`;
    writeFileSync(tmp, text);
    renameSync(tmp, output);
  }
} catch (e) {
  console.error(`yaml2json: ${e.message}`);
  process.exit(1);
}
