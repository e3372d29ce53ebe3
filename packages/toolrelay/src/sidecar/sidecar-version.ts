/** The package version the sidecar reports in `welcome` (kept equal to package.json's by a test). */
export const SIDECAR_VERSION = "0.1.0";
