// A cron job as a Node service writes one (issue 64): Sentry.withMonitor checks in in_progress, runs the job,
// then checks in ok (or error when it throws), creating the monitor from its monitor_config.
const Sentry = require("@sentry/node");

Sentry.init({ dsn: process.env.SENTRY_DSN, defaultIntegrations: false, tracesSampleRate: 0 });

const config = {
  schedule: { type: "crontab", value: "*/5 * * * *" },
  checkinMargin: 2,
  maxRuntime: 4,
  timezone: "Europe/Berlin",
};

async function main() {
  await Sentry.withMonitor("node-report", async () => new Promise((done) => setTimeout(done, 50)), config);
  // Each run's check-ins sent before the next run starts, as two invocations of a cron job send them: the SDK
  // sends envelopes side by side, and on a loaded machine the first run's ok arrived after the second's error.
  await Sentry.flush(10000);
  try {
    await Sentry.withMonitor("node-report", async () => { throw new Error("report failed"); }, config);
  } catch (e) {
    // the job's own error: withMonitor checked in error and rethrew it
  }
  await Sentry.flush(10000);
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
