// Fails fast and clearly on a Node.js older than 22: MikroORM 7 and the test
// runner need it. npm scripts put node_modules/.bin first on PATH, where the
// "node" devDependency provides Node 24.
const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  console.error(
    `Node.js ${process.versions.node} is too old: this project needs Node.js 22 or newer.\n` +
      "Run it through npm scripts (npm start, npm test), which use the Node 24 from the 'node' devDependency.",
  );
  process.exit(1);
}
