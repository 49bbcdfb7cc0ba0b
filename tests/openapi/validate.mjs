// validate.mjs FILE: checks an OpenAPI 3.1 document.
//
// 1. The document matches the OpenAPI 3.1 schema
//    (@seriousme/openapi-schema-validator).
// 2. What that schema cannot say:
//    - every $ref points at something in the document;
//    - operationIds are unique;
//    - every {name} in a path is a declared path parameter, and every
//      declared path parameter appears in the path;
//    - every operation has a 2xx answer;
//    - every schema under components/schemas compiles as JSON Schema
//      2020-12 in Ajv's strict mode (so a misspelt keyword fails).
// Prints one line per problem and "N passed, M failed"; exits 1 on any.
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";

const file = process.argv[2];
if (!file) {
  console.error("usage: node validate.mjs FILE");
  process.exit(2);
}

const doc = JSON.parse(readFileSync(file, "utf8"));
const results = [];
const check = (name, problems) => {
  results.push({ name, problems });
  for (const p of problems) console.log(`FAIL ${name}: ${p}`);
  if (problems.length === 0) console.log(`ok   ${name}`);
};

// 1. The OpenAPI schema.
{
  const validator = new Validator();
  const res = await validator.validate(structuredClone(doc));
  const problems = [];
  // errors is an array of Ajv errors, or a string for a $ref it could not
  // resolve.
  if (!res.valid)
    for (const e of [res.errors ?? "invalid"].flat())
      problems.push(
        typeof e === "string"
          ? e
          : `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params ?? {})}`,
      );
  if (validator.version !== "3.1")
    problems.push(`version ${validator.version}, want 3.1`);
  check("openapi 3.1 schema", problems);
}

// 2a. $refs resolve.
const pointer = (ref) => {
  if (!ref.startsWith("#/")) return undefined;
  let node = doc;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
};
const walk = (node, at, fn) => {
  if (node === null || typeof node !== "object") return;
  fn(node, at);
  for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`, fn);
};
{
  const problems = [];
  walk(doc, "", (node, at) => {
    if (typeof node.$ref === "string" && pointer(node.$ref) === undefined)
      problems.push(`${at}: unresolved $ref ${node.$ref}`);
  });
  check("$refs resolve", problems);
}

const deref = (x) => (x && typeof x.$ref === "string" ? pointer(x.$ref) : x);
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const operations = [];
for (const [path, item] of Object.entries(doc.paths ?? {}))
  for (const m of METHODS)
    if (item[m]) operations.push({ path, method: m, item, op: item[m] });

// 2b. Unique operationIds.
{
  const seen = new Map();
  const problems = [];
  for (const { path, method, op } of operations) {
    const where = `${method.toUpperCase()} ${path}`;
    if (!op.operationId) problems.push(`${where}: no operationId`);
    else if (seen.has(op.operationId))
      problems.push(`${where}: operationId ${op.operationId} also on ${seen.get(op.operationId)}`);
    else seen.set(op.operationId, where);
  }
  check("operationIds unique", problems);
}

// 2c. Path parameters match the template.
{
  const problems = [];
  for (const { path, method, item, op } of operations) {
    const where = `${method.toUpperCase()} ${path}`;
    const inPath = new Set([...path.matchAll(/\{([^}]+)\}/g)].map((x) => x[1]));
    const declared = new Set(
      [...(item.parameters ?? []), ...(op.parameters ?? [])]
        .map(deref)
        .filter((p) => p && p.in === "path")
        .map((p) => p.name),
    );
    for (const n of inPath) if (!declared.has(n)) problems.push(`${where}: {${n}} not declared`);
    for (const n of declared) if (!inPath.has(n)) problems.push(`${where}: ${n} declared, not in the path`);
  }
  check("path parameters", problems);
}

// 2d. A 2xx answer each.
{
  const problems = [];
  for (const { path, method, op } of operations)
    if (!Object.keys(op.responses ?? {}).some((c) => /^2\d\d$/.test(c)))
      problems.push(`${method.toUpperCase()} ${path}: no 2xx response`);
  check("2xx responses", problems);
}

// 2e. Component schemas are strict JSON Schema 2020-12.
{
  const problems = [];
  const schemas = doc.components?.schemas ?? {};
  const text = JSON.stringify(schemas).replaceAll('"#/components/schemas/', '"#/$defs/');
  const defs = JSON.parse(text);
  const root = {
    $defs: defs,
    type: "object",
    properties: Object.fromEntries(Object.keys(defs).map((k) => [k, { $ref: `#/$defs/${k}` }])),
  };
  try {
    const ajv = new Ajv2020({ strict: true, validateFormats: false, allErrors: true });
    ajv.compile(root);
  } catch (e) {
    problems.push(String(e.message ?? e));
  }
  check("component schemas compile (strict)", problems);
}

const failed = results.filter((r) => r.problems.length > 0).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
