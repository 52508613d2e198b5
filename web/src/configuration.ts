// Configuration export and import (superadmin): Export downloads the service's configuration as one
// JSON document; Import sends such a document, and shows what it created and updated, or each
// validation message (nothing is written then).
import { get, post } from './api.js';
import { byId, say, sayError, sayRefused, showMessages } from './dom.js';

const KINDS = ['dataSources', 'dataPoints', 'eventDetectors', 'users', 'jsonStore'] as const;

export function configurationView(): void {
  const exportForm = byId<HTMLFormElement>('export-form');
  const exportStatus = byId('export-status');
  const importForm = byId<HTMLFormElement>('import-form');
  const importStatus = byId('import-status');
  const importMessages = byId('import-messages');

  exportForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const include = KINDS.filter((k) => (exportForm.elements.namedItem(k) as HTMLInputElement).checked);
    if (include.length === 0) {
      say(exportStatus, 'Choose at least one kind of item', 'error');
      return;
    }
    void (async () => {
      try {
        const doc = await get<Record<string, unknown[]>>(`/configuration/export?include=${include.join(',')}`);
        download(doc);
        say(exportStatus, `Exported ${include.map((k) => `${doc[k]?.length ?? 0} ${k}`).join(', ')}`, 'ok');
      } catch (err) {
        sayError(exportStatus, err);
      }
    })();
  });

  importForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const file = (importForm.elements.namedItem('file') as HTMLInputElement).files?.[0];
    showMessages(importMessages, undefined);
    if (!file) {
      say(importStatus, 'Choose a configuration file first', 'error');
      return;
    }
    void (async () => {
      let doc: unknown;
      try {
        doc = JSON.parse(await file.text());
      } catch (err) {
        say(importStatus, `${file.name} is not JSON: ${err instanceof Error ? err.message : String(err)}`, 'error');
        return;
      }
      try {
        const result = await post<{ created: number; updated: number }>('/configuration/import', doc);
        say(importStatus, `Imported ${file.name}: ${result.created} created, ${result.updated} updated`, 'ok');
      } catch (err) {
        sayRefused(importStatus, importMessages, err, 'Nothing imported');
      }
    })();
  });
}

/** Saves the document as a file through a temporary link (no page navigation, nothing inline). */
function download(doc: unknown): void {
  const url = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2) + '\n'], { type: 'application/json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `configuration-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}.json`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
