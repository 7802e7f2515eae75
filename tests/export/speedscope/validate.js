// Validates speedscope files against the JSON schema the speedscope npm package ships
// (dist/release/file-format-schema.json), with ajv. Usage: node validate.js FILE...
// Run from a directory whose node_modules holds the packages of package.json.
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist/release/file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const validate = new Ajv({allErrors: true, strict: false}).compile(schema);
let failed = false;
for (const file of process.argv.slice(2)) {
  const data = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (validate(data)) {
    console.log(`valid: ${file} (${data.profiles.length} profiles, ${data.shared.frames.length} frames)`);
  } else {
    failed = true;
    console.log(`INVALID: ${file}`);
    for (const error of validate.errors.slice(0, 20)) console.log(`  ${error.instancePath} ${error.message}`);
  }
}
process.exit(failed ? 1 : 0);
