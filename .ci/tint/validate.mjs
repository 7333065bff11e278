// Validates every WGSL kernel that `qsweep kernels --out DIR` wrote, with
// Dawn's WGSL compiler (Tint) through the npm package `webgpu` (dawn.node) on
// Dawn's null backend: no GPU needed, but full WGSL + WebGPU validation
// (parsing, const-evaluation, uniformity analysis, pipeline and limit checks).
//
//   node .ci/tint/validate.mjs DIR
//
// Each manifest row is validated twice: on a device with WebGPU's default
// limits and on one that requires every limit the adapter offers at its best.
// Exit status: 0 all passed, 1 something failed, 2 usage error.
// Environment: TINT_JOBS (worker processes; default one per CPU, at most 8),
// TINT_TIMEOUT_S (give up after this long; default 600).
// See README.md next to this file.

import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const started = process.hrtime.bigint();
// Set (to "K/N") only in the child processes this script starts for itself:
// they validate every Nth row from row K and report over fd 3.
const WORKER = process.env.TINT_WORKER;
const say = WORKER ? () => {} : (line) => console.log(line);
const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;

// Dawn keeps the event loop alive, so every way out ends in process.exit.
// (stdout to a file or pipe is synchronous on Linux: nothing is lost.)
function finish(code, text) {
  if (text) fs.writeSync(1, text.endsWith('\n') ? text : text + '\n');
  process.exit(code);
}

const oneLine = (s) =>
  String(s)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' | ');

function usage(msg) {
  process.stderr.write(`tint: ${msg}\nusage: node .ci/tint/validate.mjs DIR   (DIR from \`qsweep kernels --out DIR\`, holding manifest.tsv)\n`);
  process.exit(2);
}

// A hang inside Dawn must not hang CI.
const timeoutS = Number(process.env.TINT_TIMEOUT_S || 600);
setTimeout(() => finish(1, `tint: FAIL timed out after ${timeoutS} s`), timeoutS * 1000).unref();

// ---------------------------------------------------------------- arguments

const args = process.argv.slice(2);
if (args.length !== 1 || args[0].startsWith('-')) usage(args.length ? `unexpected arguments: ${args.join(' ')}` : 'missing DIR');
const dir = args[0];
if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) usage(`${dir}: not a directory`);
const manifestPath = path.join(dir, 'manifest.tsv');
if (!fs.existsSync(manifestPath)) usage(`${manifestPath}: no such file`);

// ----------------------------------------------------------------- manifest

const REQUIRED = ['file', 'entry_point', 'workgroup_size', 'workgroup_bytes', 'storage_buffers'];
const LABELS = ['kernel', 'arrival', 'service', 'thinning', 'fast_heap', 'heap_memory'];

const manifestErrors = [];
const lines = fs.readFileSync(manifestPath, 'utf8').split('\n').map((l) => l.replace(/\r$/, ''));
while (lines.length && lines[lines.length - 1] === '') lines.pop();
if (!lines.length) usage(`${manifestPath}: empty (no header)`);
const header = lines[0].split('\t').map((h) => h.trim());
const missingCols = REQUIRED.filter((c) => !header.includes(c));
if (missingCols.length) usage(`${manifestPath}: header lacks column(s) ${missingCols.join(', ')} (has: ${header.join(', ')})`);

function parseCount(row, col, lineNo) {
  const s = row[col];
  if (!/^\d+$/.test(s ?? '')) {
    manifestErrors.push(`manifest.tsv:${lineNo}: ${col} = ${JSON.stringify(s)} is not a non-negative integer`);
    return 0;
  }
  return Number(s);
}

const rows = [];
const seen = new Set();
for (let i = 1; i < lines.length; i++) {
  const lineNo = i + 1;
  if (lines[i].trim() === '') continue;
  const fields = lines[i].split('\t');
  if (fields.length !== header.length) {
    manifestErrors.push(`manifest.tsv:${lineNo}: ${fields.length} fields, header has ${header.length}`);
    continue;
  }
  const row = Object.fromEntries(header.map((h, j) => [h, fields[j].trim()]));
  if (seen.has(row.file)) manifestErrors.push(`manifest.tsv:${lineNo}: ${row.file} listed twice`);
  seen.add(row.file);
  const wg = row.workgroup_size.split(/[,x ]+/).filter(Boolean).map(Number);
  if (!wg.length || wg.length > 3 || wg.some((n) => !Number.isInteger(n) || n < 1)) {
    manifestErrors.push(`manifest.tsv:${lineNo}: workgroup_size = ${JSON.stringify(row.workgroup_size)} is not N or X,Y,Z`);
  }
  while (wg.length < 3) wg.push(1);
  const label = LABELS.filter((c) => c in row).map((c) => `${c}=${row[c]}`).join(' ');
  const entry = {
    lineNo,
    file: row.file,
    entryPoint: row.entry_point,
    wg,
    workgroupBytes: parseCount(row, 'workgroup_bytes', lineNo),
    storageBuffers: parseCount(row, 'storage_buffers', lineNo),
    uniformBuffers: 'uniform_buffers' in row ? parseCount(row, 'uniform_buffers', lineNo) : 0,
    label,
    code: null,
  };
  const p = path.join(dir, row.file);
  if (path.basename(row.file) !== row.file || !row.file.endsWith('.wgsl')) {
    manifestErrors.push(`manifest.tsv:${lineNo}: file = ${JSON.stringify(row.file)} is not a .wgsl file name`);
  } else if (!fs.existsSync(p)) {
    manifestErrors.push(`manifest.tsv:${lineNo}: ${row.file}: no such file in ${dir}`);
  } else {
    entry.code = fs.readFileSync(p, 'utf8');
  }
  rows.push(entry);
}
if (!rows.length) usage(`${manifestPath}: no rows under the header`);
for (const f of fs.readdirSync(dir).sort()) {
  if (f.endsWith('.wgsl') && !seen.has(f)) manifestErrors.push(`${f}: in ${dir} but not listed in manifest.tsv`);
}

// -------------------------------------------------------------------- Dawn

// import { create, globals } from 'webgpu', but with a hint when it is not installed.
let webgpu;
try {
  webgpu = await import('webgpu');
} catch (e) {
  usage(`cannot load the npm package 'webgpu' (${oneLine(e?.message ?? e)}); run: (cd .ci/tint && npm ci)`);
}
const { create, globals } = webgpu;
Object.assign(globalThis, globals);
const require = createRequire(import.meta.url);
const pkgVersion = JSON.parse(
  fs.readFileSync(path.join(path.dirname(require.resolve('webgpu')), 'package.json'), 'utf8'),
).version;

const gpu = create(['backend=null']);
const adapter = await gpu.requestAdapter();
if (!adapter) finish(1, `tint: FAIL webgpu ${pkgVersion}: Dawn null backend offered no adapter`);
const info = adapter.info;
say(`tint: webgpu ${pkgVersion} (dawn.node, node ${process.version}), backend=null, adapter "${info.device || info.description || '?'}"`);

const largest = {};
for (const k in adapter.limits) {
  if (typeof adapter.limits[k] === 'number') largest[k] = adapter.limits[k];
}

// Errors outside any error scope (there should be none) are failures too;
// they are pinned on the validation that was running when they arrived.
let current = '(no validation running)';
const stray = [];
async function openDevice(name, requiredLimits) {
  // An adapter hands out one device; each device gets its own.
  const adapter = await gpu.requestAdapter();
  if (!adapter) finish(1, `tint: FAIL Dawn null backend offered no second adapter`);
  let device;
  const dropped = [];
  for (;;) {
    try {
      device = await adapter.requestDevice(requiredLimits ? { requiredLimits } : undefined);
      break;
    } catch (e) {
      // A limit name this Dawn lists but will not take back: drop it, say so.
      const k = requiredLimits && Object.keys(requiredLimits).find((n) => String(e?.message).includes(n));
      if (!k) finish(1, `tint: FAIL requestDevice (${name}) failed: ${oneLine(e?.message ?? e)}`);
      dropped.push(k);
      delete requiredLimits[k];
    }
  }
  if (dropped.length) say(`tint: note: ${name}: Dawn refused required limit(s) ${dropped.join(', ')}; left at default`);
  device.addEventListener('uncapturederror', (ev) => {
    stray.push(`${current}: uncaptured ${ev.error?.constructor?.name ?? 'error'}: ${oneLine(ev.error?.message ?? String(ev.error))}`);
  });
  device.lost.then((l) => {
    if (l.reason !== 'destroyed') stray.push(`${current}: device (${name}) lost: ${l.reason}: ${oneLine(l.message)}`);
  });
  return { name, device, limits: device.limits };
}

const devices = [await openDevice('default limits', null), await openDevice('largest limits', { ...largest })];

const SHOWN = [
  'maxComputeWorkgroupStorageSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxStorageBufferBindingSize',
  'maxBufferSize',
];
const differ = Object.keys(largest).filter((k) => devices[0].limits[k] !== devices[1].limits[k]);
say(
  `tint: limits default/largest: ` +
    SHOWN.map((k) => `${k}=${devices[0].limits[k]}/${devices[1].limits[k]}`).join(' ') +
    (differ.length ? ` (${differ.length} limits differ)` : ' (this adapter offers nothing above the defaults)'),
);

// What the manifest says a row needs beyond a device's limits; each with the
// pattern Dawn's pipeline error must match for the rejection to be "expected".
function exceeded(row, limits) {
  const out = [];
  if (row.workgroupBytes > limits.maxComputeWorkgroupStorageSize) {
    out.push({
      why: `needs ${row.workgroupBytes} bytes > ${limits.maxComputeWorkgroupStorageSize} (maxComputeWorkgroupStorageSize)`,
      re: /workgroup storage \((\d+) bytes\)/,
      want: row.workgroupBytes,
    });
  }
  if (row.storageBuffers > limits.maxStorageBuffersPerShaderStage) {
    out.push({
      why: `needs ${row.storageBuffers} storage buffers > ${limits.maxStorageBuffersPerShaderStage} (maxStorageBuffersPerShaderStage)`,
      re: /storage buffers? \((\d+)\)|number of storage buffers/i,
      want: row.storageBuffers,
    });
  }
  if (row.uniformBuffers > limits.maxUniformBuffersPerShaderStage) {
    out.push({
      why: `needs ${row.uniformBuffers} uniform buffers > ${limits.maxUniformBuffersPerShaderStage} (maxUniformBuffersPerShaderStage)`,
      re: /uniform buffers? \((\d+)\)|number of uniform buffers/i,
      want: row.uniformBuffers,
    });
  }
  const inv = row.wg[0] * row.wg[1] * row.wg[2];
  if (inv > limits.maxComputeInvocationsPerWorkgroup) {
    out.push({ why: `needs ${inv} invocations > ${limits.maxComputeInvocationsPerWorkgroup} (maxComputeInvocationsPerWorkgroup)`, re: /invocations|workgroup_size\(/i });
  }
  ['X', 'Y', 'Z'].forEach((a, i) => {
    const lim = limits[`maxComputeWorkgroupSize${a}`];
    if (row.wg[i] > lim) out.push({ why: `needs workgroup size ${a} = ${row.wg[i]} > ${lim} (maxComputeWorkgroupSize${a})`, re: /workgroup_size\(/i });
  });
  return out;
}

// One validation: returns { failures: [line...], skip: string|null }.
async function validate(row, dev) {
  const { device, name, limits } = dev;
  const failures = [];
  const tag = `[${name}]`;
  const where = (m) => `${row.file}:${m.lineNum}:${m.linePos}`;
  const suffix = row.label ? `  {${row.label}}` : '';

  device.pushErrorScope('validation');
  // No label: Dawn shares one module between identical sources, so a label
  // would name whichever file came first.
  const module = device.createShaderModule({ code: row.code });
  const compile = await module.getCompilationInfo();
  const moduleErr = await device.popErrorScope();

  let compileProblems = 0;
  const notes = compile.messages.filter((m) => m.type === 'info');
  for (const m of compile.messages) {
    if (m.type !== 'error' && m.type !== 'warning') continue;
    compileProblems++;
    const ctx = m.type === 'error' && notes.length ? ` (${notes.map((n) => `note ${n.lineNum}:${n.linePos}: ${oneLine(n.message)}`).join('; ')})` : '';
    failures.push(`FAIL ${where(m)} ${tag} ${m.type}: ${oneLine(m.message)}${ctx}${suffix}`);
  }
  if (moduleErr && !compileProblems) failures.push(`FAIL ${row.file} ${tag} createShaderModule: ${oneLine(moduleErr.message)}${suffix}`);
  if (moduleErr || compile.messages.some((m) => m.type === 'error')) return { failures, skip: null };

  const over = exceeded(row, limits);
  device.pushErrorScope('validation');
  let thrown = null;
  try {
    device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: row.entryPoint } });
  } catch (e) {
    thrown = e;
  }
  const pipeErr = await device.popErrorScope();
  const msg = thrown ? `threw ${oneLine(thrown.message)}` : pipeErr ? oneLine(pipeErr.message) : null;

  if (!over.length) {
    if (msg) failures.push(`FAIL ${row.file} ${tag} createComputePipeline(entryPoint '${row.entryPoint}'): ${msg}${suffix}`);
    return { failures, skip: null };
  }
  // The manifest says this row does not fit these limits: Dawn must reject the
  // pipeline, and for that reason (with the manifest's byte count).
  const why = over.map((o) => o.why).join(', ');
  if (!msg) {
    failures.push(`FAIL ${row.file} ${tag} manifest says it ${why}, but Dawn created the pipeline${suffix}`);
  } else if (!over.some((o) => o.re.test(msg))) {
    failures.push(`FAIL ${row.file} ${tag} createComputePipeline(entryPoint '${row.entryPoint}'): ${msg}${suffix}`);
  } else {
    for (const o of over) {
      const got = o.want !== undefined && msg.match(o.re)?.[1];
      if (got && Number(got) !== o.want) {
        failures.push(`FAIL ${row.file} ${tag} manifest says ${o.want} but Dawn counts ${got}: ${msg}${suffix}`);
      }
    }
  }
  const limitsWord = name.replace(/ limits$/, '');
  return { failures, skip: failures.length ? null : `skipped under ${limitsWord} limits: ${why}` };
}

// -------------------------------------------------------------- self-check
// The validator must really validate: known-bad shaders are rejected with the
// expected Tint messages, a known-good one passes.

const CANARIES = [
  {
    file: '(self-check: f32 overflow)',
    code: '@group(0) @binding(0) var<storage, read_write> o: array<f32>;\nconst BIG: f32 = 3.4028235e38;\n@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { o[g.x] = BIG; }\n',
    expect: /cannot be represented as 'f32'/,
  },
  {
    file: '(self-check: uniformity)',
    code: "@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {\n  if (o[g.x] > 0.0) { workgroupBarrier(); }\n}\n",
    expect: /must only be called from uniform control flow/,
  },
  {
    file: '(self-check: workgroup storage)',
    code: 'var<workgroup> t: array<f32, 4097>;\n@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) { t[i] = 1.0; }\n',
    expect: /workgroup storage \(16400 bytes\) is larger than the maximum allowed \(16384 bytes\)/,
  },
  {
    file: '(self-check: valid)',
    code: '@group(0) @binding(0) var<storage, read_write> o: array<f32>;\nvar<workgroup> t: array<f32, 64>;\n@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {\n  t[i] = o[i]; workgroupBarrier(); o[i] = t[63u - i];\n}\n',
    expect: null,
  },
];
for (const c of WORKER ? [] : CANARIES) {
  current = c.file;
  const row = { file: c.file, entryPoint: 'main', wg: [64, 1, 1], workgroupBytes: 0, storageBuffers: 0, uniformBuffers: 0, label: '', code: c.code };
  const { failures } = await validate(row, devices[0]);
  const ok = c.expect ? failures.length > 0 && failures.some((f) => c.expect.test(f)) : failures.length === 0;
  if (!ok) {
    finish(1, `tint: FAIL self-check ${c.file}: expected ${c.expect ? `rejection matching ${c.expect}` : 'no errors'}, got: ${failures.join(' / ') || 'no errors'}`);
  }
}

// ------------------------------------------------------------------- run

const GC_EVERY = 50;
v8.setFlagsFromString('--expose-gc');
let gc = () => {};
try {
  gc = vm.runInNewContext('gc');
} catch {}

// Validates rows k, k+n, k+2n, ... on both devices, in order.
async function validateShard(k, n) {
  const results = [];
  let done = 0;
  for (let i = k; i < rows.length; i += n) {
    const row = rows[i];
    // The JS wrappers of modules and pipelines are small, so V8 seldom
    // collects them, and each holds Dawn's (large) compiled module: collect
    // now and then to keep memory flat.
    if (++done % GC_EVERY === 0) gc();
    if (row.code === null) continue; // reported as a manifest error
    for (let d = 0; d < devices.length; d++) {
      current = `${row.file} [${devices[d].name}]`;
      results.push({ i, d, ...(await validate(row, devices[d])) });
    }
  }
  // Let late uncaptured errors arrive, then tear down.
  current = '(after the last validation)';
  for (const { device } of devices) await device.queue.onSubmittedWorkDone();
  await new Promise((r) => setTimeout(r, 10));
  for (const { device } of devices) device.destroy();
  return results;
}

if (WORKER) {
  const [k, n] = WORKER.split('/').map(Number);
  const results = await validateShard(k, n);
  fs.writeSync(3, JSON.stringify({ results, stray }) + '\n');
  process.exit(0);
}

// Tint is CPU-bound and single-threaded here: shard the rows over child
// processes (TINT_JOBS, default one per CPU up to 8, and one per 50 rows).
// Output is merged back into manifest order: it does not depend on the count.
const jobs = Math.max(
  1,
  Math.min(Number(process.env.TINT_JOBS) || Math.min(os.availableParallelism(), 8, Math.ceil(rows.length / 50)), rows.length),
);
const children = [];
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));

function runWorker(k) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), dir], {
      env: { ...process.env, TINT_WORKER: `${k}/${jobs}` },
      // Dawn's own logging (fd 1) goes to our stderr; results come on fd 3.
      stdio: ['ignore', 2, 2, 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdio[3].on('data', (b) => (out += b));
    child.on('close', (code, signal) => {
      let parsed = null;
      try {
        parsed = JSON.parse(out);
      } catch {}
      resolve({ k, code, signal, parsed });
    });
  });
}

const byKey = new Map();
const workerProblems = [];
if (jobs === 1) {
  for (const r of await validateShard(0, 1)) byKey.set(`${r.i}/${r.d}`, r);
} else {
  for (const { device } of devices) device.destroy();
  for (const w of await Promise.all(Array.from({ length: jobs }, (_, k) => runWorker(k)))) {
    if (w.code !== 0 || !w.parsed) {
      workerProblems.push(`worker ${w.k}/${jobs} ended with ${w.signal ? `signal ${w.signal}` : `exit status ${w.code}`}${w.parsed ? '' : ', no results'}`);
    }
    for (const r of w.parsed?.results ?? []) byKey.set(`${r.i}/${r.d}`, r);
    stray.push(...(w.parsed?.stray ?? []));
  }
}

let passed = 0;
let failed = 0;
let skipped = 0;
for (const m of manifestErrors) console.log(`FAIL manifest: ${m}`);
for (const w of workerProblems) console.log(`FAIL ${w}`);
rows.forEach((row, i) => {
  devices.forEach((dev, d) => {
    if (row.code === null) {
      failed++; // reported as a manifest error
      return;
    }
    const r = byKey.get(`${i}/${d}`);
    if (!r) {
      failed++;
      console.log(`FAIL ${row.file} [${dev.name}] no result (its worker died, see above)`);
    } else if (r.failures.length) {
      failed++;
      for (const f of r.failures) console.log(f);
    } else if (r.skip) {
      skipped++;
      console.log(`SKIP ${row.file} [${dev.name}] ${r.skip} (module valid; Dawn rejects the pipeline as expected)${row.label ? `  {${row.label}}` : ''}`);
    } else passed++;
  });
});
for (const s of stray) console.log(`FAIL ${s}`);

const total = rows.length * devices.length;
const bad = failed > 0 || stray.length > 0 || manifestErrors.length > 0 || workerProblems.length > 0;
console.log(
  `tint: ${rows.length} variants, ${total} validations: ${passed} passed, ${failed} failed` +
    (skipped ? `, ${skipped} skipped` : '') +
    (manifestErrors.length ? `, ${manifestErrors.length} manifest errors` : '') +
    (stray.length ? `, ${stray.length} uncaptured errors` : ''),
);
finish(bad ? 1 : 0, `tint: done in ${seconds().toFixed(2)} s (${jobs} job${jobs > 1 ? 's' : ''})`);
