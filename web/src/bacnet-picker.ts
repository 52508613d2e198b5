// The point editor's BACnet picker: for a BACNET_IP source, "Discover objects" asks the source's
// network (GET /data-sources/<xid>/discover) and lists each device's objects; choosing one fills
// the locator's object type and instance, the data type its family reads as, and an empty name.
import { get, seg } from './api.js';
import { byId, h, say } from './dom.js';
import type { Values } from './spec-form.js';

interface DiscoveredObject {
  objectType: string;
  objectInstance: number;
  name: string | null;
}
interface DiscoveredDevice {
  deviceInstance: number;
  address: string;
  name: string | null;
  objects: DiscoveredObject[];
}

const dataTypeOf = (objectType: string) => (objectType.startsWith('ANALOG') ? 'NUMERIC' : objectType.startsWith('BINARY') ? 'BINARY' : 'MULTISTATE');

export interface BacnetPicker {
  /** Shows the picker when the point's source is this BACNET_IP source (undefined: hides it). */
  show(sourceXid: string | undefined): void;
}

export function bacnetPicker(fill: (values: Values) => void): BacnetPicker {
  const row = byId('point-editor-discover');
  const select = h('select', { 'aria-label': 'Discovered BACnet objects', hidden: true });
  const status = h('span', { class: 'status', role: 'status' });
  let sourceXid: string | undefined;
  let found: { device: DiscoveredDevice; object: DiscoveredObject }[] = [];
  const button = h('button', { type: 'button', onclick: () => void discover() }, 'Discover BACnet objects');
  row.replaceChildren(button, ' ', select, ' ', status);

  async function discover(): Promise<void> {
    if (!sourceXid) return;
    button.disabled = true;
    say(status, 'Asking the network (Who-Is)…');
    try {
      const { devices } = await get<{ devices: DiscoveredDevice[] }>(`/data-sources/${seg(sourceXid)}/discover`);
      found = devices.flatMap((device) => device.objects.map((object) => ({ device, object })));
      select.replaceChildren(
        h('option', { value: '' }, `${found.length} objects on ${devices.length} devices: choose one`),
        ...found.map((f, i) => h('option', { value: String(i) }, `${f.device.deviceInstance} ${f.device.name ?? f.device.address}: ${f.object.objectType} ${f.object.objectInstance}${f.object.name ? ` (${f.object.name})` : ''}`)),
      );
      select.hidden = found.length === 0;
      say(status, devices.length === 0 ? 'No device answered' : '');
    } catch (err) {
      say(status, `Discovery failed: ${err instanceof Error ? err.message : String(err)}`, 'error');
    } finally {
      button.disabled = false;
    }
  }

  select.addEventListener('change', () => {
    const f = found[Number(select.value)];
    if (!f || select.value === '') return;
    fill({ name: f.object.name ?? `${f.object.objectType} ${f.object.objectInstance}`, pointLocator: { objectType: f.object.objectType, objectInstance: f.object.objectInstance, dataType: dataTypeOf(f.object.objectType) } });
  });

  return {
    show(xid) {
      if (xid !== sourceXid) {
        found = [];
        select.replaceChildren();
        select.hidden = true;
        say(status, '');
      }
      sourceXid = xid;
      row.hidden = xid === undefined;
    },
  };
}
