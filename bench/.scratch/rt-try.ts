import { runRoundTrip, quickRoundTripConfig, fullRoundTripConfig } from "../suites/round-trip.js";
const which = process.argv[2] === "full" ? fullRoundTripConfig : quickRoundTripConfig;
const result = await runRoundTrip({ ...which, mcp: process.argv[3] !== "nomcp" }, (l) => console.error(l));
console.log(JSON.stringify(result.rows, null, 1), result.seconds);
