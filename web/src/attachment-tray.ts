import type { HttpTransport } from '../../src/client/index.js';
import type { AttachmentRef } from '../../src/protocol/attachments.js';
import { isImageType, runAttachment, uploadAttachment, type RunAttachmentRef } from './attachment-api.js';
import { el, replaceChildren } from './el.js';
import { errorText } from './format.js';

/** A file waiting to go with the next message: its chip, and its reference once uploaded. */
interface PendingFile {
  readonly file: File;
  readonly chip: HTMLElement;
  readonly status: HTMLElement;
  ref?: AttachmentRef;
}

/** A byte count as a person reads it. */
function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The attachments of the next message: files chosen with the picker, pasted or dropped onto the composer,
 * shown as removable chips (images with a local preview); uploaded one by one when the message is sent.
 */
export class AttachmentTray {
  readonly element: HTMLElement;
  readonly picker: HTMLInputElement;
  private readonly list: HTMLElement;
  private items: PendingFile[] = [];

  /** `target` is where paste and drop add files (the composer). */
  constructor(target: HTMLElement) {
    this.picker = el('input', {
      type: 'file',
      id: 'attach-files',
      class: 'attach-input',
      multiple: true,
      onchange: () => {
        if (this.picker.files) this.add(this.picker.files);
        this.picker.value = '';
      },
    });
    this.list = el('ul', { class: 'attachment-chips', 'aria-label': 'Attachments of the next message' });
    this.element = el(
      'div',
      { class: 'attachment-tray' },
      el('label', { for: 'attach-files', class: 'btn btn-small attach-label' }, 'Attach files'),
      this.picker,
      el('span', { class: 'muted attach-hint' }, 'or paste or drop them here'),
      this.list,
    );
    target.addEventListener('paste', (event) => {
      const files = (event as ClipboardEvent).clipboardData?.files;
      if (!files || files.length === 0) return;
      event.preventDefault();
      this.add(files);
    });
    target.addEventListener('dragover', (event) => {
      if (!(event as DragEvent).dataTransfer?.types.includes('Files')) return;
      event.preventDefault();
      target.classList.add('is-dragover');
    });
    target.addEventListener('dragleave', () => target.classList.remove('is-dragover'));
    target.addEventListener('drop', (event) => {
      target.classList.remove('is-dragover');
      const files = (event as DragEvent).dataTransfer?.files;
      if (!files || files.length === 0) return;
      event.preventDefault();
      this.add(files);
    });
  }

  /** How many files wait. */
  get size(): number {
    return this.items.length;
  }

  /** Add files as chips. */
  add(files: Iterable<File>): void {
    for (const file of files) {
      const status = el('span', { class: 'attachment-status muted' }, size(file.size));
      const chip = el(
        'li',
        { class: 'attachment-chip', 'data-name': file.name },
        el('span', { class: 'attachment-name' }, file.name || 'pasted file'),
        status,
      );
      const item: PendingFile = { file, chip, status };
      chip.appendChild(
        el(
          'button',
          {
            type: 'button',
            class: 'btn btn-small attachment-remove',
            'aria-label': `Remove ${file.name}`,
            onclick: () => this.remove(item),
          },
          '×',
        ),
      );
      if (isImageType(file.type)) this.preview(chip, file);
      this.items.push(item);
      this.list.appendChild(chip);
    }
  }

  /** A local preview of an image chip (a data: URL read from the file; the CSP allows no blob:). */
  private preview(chip: HTMLElement, file: File): void {
    const reader = new FileReader();
    reader.onload = () => {
      if (typeof reader.result !== 'string' || !reader.result.startsWith(`data:${file.type};`)) return;
      chip.prepend(el('img', { class: 'attachment-preview', alt: '', src: reader.result }));
    };
    reader.readAsDataURL(file);
  }

  private remove(item: PendingFile): void {
    this.items = this.items.filter((other) => other !== item);
    item.chip.remove();
  }

  /** Forget every file (after the message was sent). */
  clear(): void {
    this.items = [];
    replaceChildren(this.list);
  }

  /**
   * Upload the files not uploaded yet, in order; answers the run's attachment items, or undefined when any
   * upload failed (its chip shows why; the uploaded ones are kept, so sending again uploads only the rest).
   */
  async upload(http: HttpTransport, sessionId: string): Promise<RunAttachmentRef[] | undefined> {
    let failed = false;
    for (const item of this.items) {
      if (item.ref) continue;
      item.chip.classList.remove('is-failed');
      item.status.textContent = 'uploading…';
      try {
        item.ref = await uploadAttachment(http, sessionId, item.file);
        item.status.textContent = `${size(item.ref.bytes)} · uploaded`;
      } catch (error) {
        failed = true;
        item.chip.classList.add('is-failed');
        item.status.textContent = errorText(error);
        item.status.setAttribute('role', 'alert');
      }
    }
    if (failed) return undefined;
    return this.items.map((item) => runAttachment(item.ref!, item.file.name));
  }
}
