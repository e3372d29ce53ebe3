/** The machine a benchmark ran on, for the report header. */
import { cpus, totalmem, platform, release, arch, loadavg } from "node:os";

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  loadAverage: string;
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? "unknown",
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: `${platform()} ${release()} ${arch()}`,
    node: process.version,
    loadAverage: loadavg()
      .map((value) => value.toFixed(2))
      .join(" / "),
  };
}
