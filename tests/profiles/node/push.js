// push.js - a Node.js process profiled by Grafana's Pyroscope SDK
// (@pyroscope/nodejs, wall and heap profilers), pushing to ember serve's
// POST /ingest as it would to a Pyroscope server: EMBER_URL, EMBER_TOKEN;
// EMBER_SDK names the SDK's module (@pyroscope/nodejs, the 0.4 SDK, by
// default; pyroscope-nodejs-0.6 the 0.6 one).
// Runs a known function (busyLoop) for a few seconds, then stops the
// profiler, which sends what it holds.  Exit 0 once stopped.
'use strict';
const Pyroscope = require(process.env.EMBER_SDK || '@pyroscope/nodejs');

function busyLoop(ms) {
  const end = Date.now() + ms;
  let x = 0;
  while (Date.now() < end) {
    for (let i = 0; i < 10000; i++) x += Math.sqrt(i + x % 7);
  }
  return x;
}

async function main() {
  Pyroscope.init({
    serverAddress: process.env.EMBER_URL,
    authToken: process.env.EMBER_TOKEN,
    appName: 'node-demo',
    tags: { team: 'ember' },
    flushIntervalMs: 1000,
    wall: { samplingDurationMs: 1000, samplingIntervalMicros: 2000 },
  });
  Pyroscope.start();
  const end = Date.now() + 3500;
  while (Date.now() < end) {
    busyLoop(50);
    await new Promise((r) => setImmediate(r));
  }
  await Pyroscope.stop();
  console.log('stopped');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
