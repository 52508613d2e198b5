// The point editor's fields for its text renderer (src/core/text-renderer.ts): how its values are
// shown, with the choices that fit its data type.
import { rendererTypesFor } from '../../src/core/text-renderer.js';
import type { FieldSpec, Values } from './spec-form.js';

const dataType = (v: Values) => String((v.pointLocator as Values | undefined)?.dataType ?? 'NUMERIC');
const rendererIs = (type: string) => (v: Values) => String((v.textRenderer as Values | undefined)?.type ?? 'PLAIN') === type;

export const TEXT_RENDERER_FIELDS: FieldSpec[] = [
  {
    path: 'textRenderer.type',
    label: 'Show values as',
    kind: 'select',
    options: (v) => rendererTypesFor(dataType(v)),
    hint: 'PLAIN: 6 significant digits; ANALOG: a decimal pattern; BINARY and MULTISTATE: a text per state',
  },
  { path: 'textRenderer.format', label: 'Decimal pattern', kind: 'text', placeholder: '0.00', when: rendererIs('ANALOG'), hint: '0: a digit always shown, #: shown when not zero, ",": thousands (#,##0.0)' },
  { path: 'textRenderer.zeroLabel', label: 'Text for false', kind: 'text', placeholder: 'Off', when: rendererIs('BINARY') },
  { path: 'textRenderer.oneLabel', label: 'Text for true', kind: 'text', placeholder: 'On', when: rendererIs('BINARY') },
  { path: 'textRenderer.values', label: 'Text of each state (number=text, comma-separated)', kind: 'states', placeholder: '0=Off, 1=Manual, 2=Auto', when: rendererIs('MULTISTATE') },
];
