import { runRoundTrip, fullRoundTripConfig } from "../suites/round-trip.js";
const result = await runRoundTrip({ ...fullRoundTripConfig, rounds: Number(process.argv[2] ?? 12), throughputRounds: 0, mcp: false }, (l) => console.error(l));
for (const r of result.rows) console.log(r.measure, r.baselineValue, r.candidateValue, r.ratio.toFixed(2), r.note ?? "");
