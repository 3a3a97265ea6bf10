// Run by `npm start` (preloaded: one process fewer) and `npm test` before anything else: an older Node.js gets one clear line
// instead of a warning lost among many and a service that half works. CommonJS and ES5-level
// syntax on purpose, so that any Node.js old enough to be refused can parse it.
'use strict';
// biome-ignore lint/style/useNodejsImportProtocol: require('node:fs') needs Node.js 14.18 or newer
var fs = require('fs');
// biome-ignore lint/style/useNodejsImportProtocol: as above
var path = require('path');

var wanted = Number(
  fs
    .readFileSync(path.join(__dirname, '..', '.nvmrc'), 'utf8')
    .replace(/[^0-9.]/g, '')
    .split('.')[0],
);
var found = Number(process.versions.node.split('.')[0]);
if (found < wanted) {
  process.stderr.write(
    'This project needs Node.js ' +
      wanted +
      ' or newer, and this is ' +
      process.version +
      ': install Node.js ' +
      wanted +
      ' (nvm install ' +
      wanted +
      ', or https://nodejs.org/) and run it again.\n',
  );
  process.exit(1);
}
