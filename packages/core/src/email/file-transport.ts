import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { renderEml } from "./eml";
import type { DeliveryReceipt, EmailMessage, EmailSender, EmailTransport } from "../capabilities/email-transport";

/**
 * The local backend: each message becomes `<dir>/<id>.eml`, where the id starts with the time the
 * message was queued, so a plain `ls` lists the outbox in order. The file is written under a
 * temporary name and renamed, so a reader (a mail client, a test) never sees half a message.
 */
export class FileTransport implements EmailTransport {
  readonly kind = "file" as const;

  constructor(
    readonly dir: string,
    private readonly sender: EmailSender,
  ) {}

  async deliver(message: EmailMessage): Promise<DeliveryReceipt> {
    await mkdir(this.dir, { recursive: true });
    const name = `${message.id}.eml`;
    const temporary = join(this.dir, `.${name}.tmp`);
    await writeFile(temporary, renderEml(message, this.sender), "utf8");
    await rename(temporary, join(this.dir, name));
    return { providerMessageId: name };
  }
}
