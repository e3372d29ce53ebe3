import { runRoundTrip, fullRoundTripConfig } from "../suites/round-trip.js";
const result = await runRoundTrip({ ...fullRoundTripConfig, rounds: 0, warmupIterations: 10, mcp: false, throughputRounds: 4 }, (l) => console.error(l));
for (const r of result.rows) console.log(r.measure, r.baselineValue, r.candidateValue, r.ratio.toFixed(2), r.note ?? "");
