// push.js - a Node.js process profiled by Grafana's Pyroscope SDK
// (@pyroscope/nodejs, wall and heap profilers), pushing to ember serve's
// POST /ingest as it would to a Pyroscope server: EMBER_URL, EMBER_TOKEN;
// EMBER_SDK names the SDK's module (@pyroscope/nodejs, the 0.4 SDK, by
// default; pyroscope-nodejs-0.6 the 0.6 one).
// Runs a known function (busyLoop) for a few seconds, then stops the
// profiler, which sends what it holds.  Exit 0 once stopped.
'use strict';
const Pyroscope = require(process.env.EMBER_SDK || '@pyroscope/nodejs');

// @pyroscope/nodejs 0.6.4 races at stop(): a profiling round its timer had
// already queued (setImmediate) runs after stop() stopped the wall profiler,
// rejects with "Wall profiler is not started" and schedules the next round.
// What stop() exported was sent by then: once stopping, that rejection alone
// is ignored, and the process exits instead of waiting on the new timer.
let stopping = false;
process.on('unhandledRejection', (e) => {
  if (stopping && e && /Wall profiler is not started/.test(e.message)) return;
  console.error(e);
  process.exit(1);
});

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
  stopping = true;
  await Pyroscope.stop();
  console.log('stopped');
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
