/**
 * Lambda's execution environment for a function process, as much of it as this machine can
 * reproduce (as root, with util-linux's unshare and setpriv):
 *
 * - its own mount namespace: a read-only root file system; the function's code read-only at
 *   /var/task, its layer at /opt, the Node.js runtime at /var/lang and the runtime script at
 *   /var/runtime; a fresh, empty, writable /tmp on disk (Lambda's ephemeral storage); a /dev with
 *   null, zero, full, random and urandom and no /dev/shm;
 * - a user that is not root (nobody, 65534), no capabilities, no_new_privs;
 * - the function's memory size as a memory cgroup limit (v1 or v2, whichever the kernel has);
 * - Lambda's variables: HOME=/tmp, LAMBDA_TASK_ROOT, AWS_EXECUTION_ENV=AWS_Lambda_nodejs22.x
 *   (which makes @sparticuz/chromium set itself up as on Amazon Linux 2023: its libraries and
 *   fonts inflated into /tmp), NODE_PATH, PATH and LD_LIBRARY_PATH as Lambda sets them.
 *
 * What it cannot reproduce: Firecracker's kernel and Lambda's seccomp filter (not published; the
 * reports of multi-process Chromium failing there point at it), Lambda's CPU share for the
 * memory size, and the freeze between invocations.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const NOBODY = 65534;

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
code=$1 layer=$2 lang=$3 runtime=$4 tmp=$5 cgroup_procs=$6
shift 6
[ -n "$cgroup_procs" ] && echo $$ > "$cgroup_procs"
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

export interface Sandbox {
  /** The command to spawn: runs `program args` (paths as seen inside) in the sandbox. */
  command(program: string, args: readonly string[]): { file: string; args: string[] };
  /** Lambda's variables for a function of `memoryMiB`, to which the function's own are added. */
  readonly environment: Readonly<Record<string, string>>;
  /** The Node.js binary, as seen inside. */
  readonly node: string;
  /** The memory limit applied, in bytes (undefined when no memory cgroup could be made). */
  readonly memoryLimitBytes: number | undefined;
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

export const createSandbox = async (paths: SandboxPaths, memoryMiB: number): Promise<Sandbox> => {
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
  const lang = dirname(dirname(process.execPath));
  return {
    command: (program, args) => ({
      file: 'unshare',
      args: [
        '--mount',
        '--propagation',
        'private',
        '/bin/sh',
        setup,
        paths.codeDir,
        paths.layerDir ?? '',
        lang,
        paths.runtimeDir,
        tmp,
        cgroup?.procs ?? '',
        program,
        ...args,
      ],
    }),
    environment: {
      HOME: '/tmp',
      LAMBDA_TASK_ROOT: '/var/task',
      LAMBDA_RUNTIME_DIR: '/var/runtime',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      PATH: '/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin',
      LD_LIBRARY_PATH:
        '/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib',
      NODE_PATH: '/opt/nodejs/node22/node_modules:/opt/nodejs/node_modules:/var/runtime/node_modules',
    },
    node: '/var/lang/bin/node',
    memoryLimitBytes: cgroup ? memoryMiB * 1024 * 1024 : undefined,
    peakMemoryBytes: () => {
      try {
        return cgroup ? Number(readFileSync(cgroup.peak, 'utf8').trim()) : undefined;
      } catch {
        return undefined;
      }
    },
    async dispose() {
      if (cgroup) {
        // Anything left in it (nothing, once the runtime has ended its children) goes first.
        for (let attempt = 0; attempt < 50; attempt++) {
          const left = readFileSync(cgroup.procs, 'utf8').split('\n').filter(Boolean).map(Number);
          if (left.length === 0) break;
          for (const pid of left) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {}
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        try {
          rmdirSync(cgroup.dir);
        } catch {}
      }
      await rm(tmp, { recursive: true, force: true });
    },
  };
};
