// Builds the addon from the Rust crate with @napi-rs/cli, into
// termio.linux-x64-gnu.node beside this file. `--if-missing`: only when
// there is none (an installed tarball carries it already).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const binary = path.join(here, 'termio.linux-x64-gnu.node');
if (process.argv.includes('--if-missing') && fs.existsSync(binary)) {
  process.exit(0);
}
const manifest = path.join(here, '..', 'crates', 'termio', 'Cargo.toml');
if (!fs.existsSync(manifest)) {
  console.error(`termio: no prebuilt addon and no source to build it from (${manifest})`);
  process.exit(1);
}
const napi = path.join(path.dirname(require.resolve('@napi-rs/cli/package.json')), 'dist', 'cli.js');
const release = process.env.TERMIO_DEBUG ? [] : ['--release'];
execFileSync(
  process.execPath,
  [napi, 'build', '--platform', ...release, '--manifest-path', manifest,
    '--features', 'node', '--output-dir', here, '--no-js', '--dts', 'native.d.ts'],
  { stdio: 'inherit', cwd: here },
);
