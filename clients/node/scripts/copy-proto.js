#!/usr/bin/env node
// Copies the repository's sluice.proto into this package (proto/sluice/v1/), where the client
// loads it at run time. The repository's file is the one source: the copy is build output,
// ignored by git, and made again by every build.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const from = path.resolve(__dirname, '..', '..', '..', 'proto', 'src', 'main', 'proto', 'sluice', 'v1', 'sluice.proto');
const to = path.resolve(__dirname, '..', 'proto', 'sluice', 'v1', 'sluice.proto');

if (!fs.existsSync(from)) {
  if (fs.existsSync(to)) {
    // A packed copy of this package, outside the repository: the proto came with it.
    process.exit(0);
  }
  console.error(`copy-proto: ${from} not found, and no copy at ${to}`);
  process.exit(1);
}
fs.mkdirSync(path.dirname(to), { recursive: true });
fs.copyFileSync(from, to);
