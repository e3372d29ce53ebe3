import { PACKAGE_VERSION } from "../internal/package-version.js";

/** The package version the sidecar reports in `welcome`: package.json's. */
export const SIDECAR_VERSION = PACKAGE_VERSION;
