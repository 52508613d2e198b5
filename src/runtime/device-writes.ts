// Set values reach the device through the instance that runs its data source. Behind a proxy a
// `PUT /point-values/<xid>` may arrive anywhere: an instance that does not run the source asks the
// others over the cluster channel (`set`), the one running it writes to the device and answers
// (`set-result`); no answer within SET_TIMEOUT_MS is a device write failure.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { DeviceWriteError, type DeviceValue, type DeviceWriter } from '../services/point-values.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { ClusterChannel } from '../store/cluster/index.js';

const SET_TIMEOUT_MS = 5_000;

export interface DeviceWriteRuntime {
  runsHere(sourceId: number): Promise<boolean>;
  write(point: DataPointRecord, value: number | boolean | string): Promise<DeviceValue | void>;
}

interface SetRequest {
  id: string;
  point: DataPointRecord;
  value: number | boolean | string;
}
interface SetResult {
  id: string;
  ok: boolean;
  /** What the device now holds, when that differs from the value asked for. */
  held?: DeviceValue;
  message?: string;
  reason?: 'value' | 'device';
}

export function deviceWriterAcross(channel: ClusterChannel, runtime: DeviceWriteRuntime, log: Pick<Logger, 'warn'>): DeviceWriter {
  if (!channel.shared) return (point, value) => runtime.write(point, value);
  const waiting = new Map<string, (r: SetResult) => void>();

  // Only the instance running the source answers.
  channel.subscribe('set', (body) => {
    const req = JSON.parse(body) as SetRequest;
    const answer = (r: Omit<SetResult, 'id'>) => channel.tell('set-result', JSON.stringify({ id: req.id, ...r }));
    void (async () => {
      if (!(await runtime.runsHere(req.point.dataSourceId))) return;
      try {
        const held = await runtime.write(req.point, req.value);
        answer(held === undefined ? { ok: true } : { ok: true, held });
      } catch (err) {
        if (!(err instanceof DeviceWriteError)) log.warn({ err }, 'a relayed device write failed');
        answer({ ok: false, message: err instanceof Error ? err.message : String(err), reason: err instanceof DeviceWriteError ? err.reason : 'device' });
      }
    })();
  });
  channel.subscribe('set-result', (body) => {
    const r = JSON.parse(body) as SetResult;
    waiting.get(r.id)?.(r);
  });

  return async (point, value) => {
    if (await runtime.runsHere(point.dataSourceId)) return runtime.write(point, value);
    const id = randomUUID();
    const result = await new Promise<SetResult | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), SET_TIMEOUT_MS);
      waiting.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      channel.tell('set', JSON.stringify({ id, point, value } satisfies SetRequest));
    }).finally(() => waiting.delete(id));
    if (!result) throw new DeviceWriteError('Data source is not running on any instance');
    if (!result.ok) throw new DeviceWriteError(result.message ?? 'Device write failed', result.reason ?? 'device');
    return result.held;
  };
}
