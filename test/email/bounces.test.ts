import { describe, expect, it } from "vitest";
import { feedbackTags, parseSesEvent } from "@invoicing/core/email/bounces";
import { SesTransport } from "@invoicing/core/email/ses-transport";
import { sesBounceEvent } from "../deploy/lambda";

/**
 * SES feedback (docs/email-and-public-pages.md, "Bounces and complaints"): the tags every email
 * carries and the events they lead back from. The marking itself, through the SNS subscriber's
 * bundle against DynamoDB Local, is in test/deploy/bundles.test.ts.
 */
describe("SES feedback", () => {
  const tags = feedbackTags("user/with odd:chars", "20261122T093000000Z-0123456789abcdef");

  it("tags every SES send with its outbox id and user, in characters SES allows in a tag", () => {
    const transport = new SesTransport(async () => ({}) as never, {
      from: "billing@example.com",
      configurationSet: "invoicing-dev-email",
    });
    const input = transport.commandInput({
      id: "20261122T093000000Z-0123456789abcdef",
      userId: "user/with odd:chars",
      to: "ap@client.example",
      subject: "Invoice",
      text: "…",
      createdAt: "2026-11-22T09:30:00.000Z",
    });
    expect(input.ConfigurationSetName).toBe("invoicing-dev-email");
    expect(input.EmailTags).toEqual(tags);
    for (const tag of tags) expect(tag.Value).toMatch(/^[A-Za-z0-9_-]{1,256}$/);
  });

  it("reads a bounce, a complaint and a reject back to the email and user", () => {
    const bounce = parseSesEvent(
      sesBounceEvent({ recipient: "Gone@Client.example", tags, type: "Transient", subType: "MailboxFull" }),
    );
    expect(bounce).toMatchObject({
      problem: "bounced",
      detail: "Transient/MailboxFull",
      outboxId: "20261122T093000000Z-0123456789abcdef",
      userId: "user/with odd:chars",
      recipients: ["gone@client.example"],
    });
    const mail = sesBounceEvent({ recipient: "x@client.example", tags }).mail;
    expect(
      parseSesEvent({
        eventType: "Complaint",
        mail,
        complaint: {
          complainedRecipients: [{ emailAddress: "x@client.example" }],
          complaintFeedbackType: "abuse",
          timestamp: "2026-11-22T10:00:00.000Z",
        },
      }),
    ).toMatchObject({
      problem: "complained",
      detail: "abuse",
      at: "2026-11-22T10:00:00.000Z",
      recipients: ["x@client.example"],
    });
    expect(parseSesEvent({ eventType: "Reject", mail, reject: { reason: "Bad content" } })).toMatchObject({
      problem: "rejected",
      detail: "Bad content",
      recipients: ["x@client.example"],
    });
  });

  it("ignores other event types and emails that are not ours (no tags, or tags not of our making)", () => {
    expect(
      parseSesEvent({ eventType: "Delivery", mail: sesBounceEvent({ recipient: "a@b.example", tags }).mail }),
    ).toBeNull();
    expect(parseSesEvent(sesBounceEvent({ recipient: "a@b.example", tags: [] }))).toBeNull();
    expect(
      parseSesEvent(
        sesBounceEvent({
          recipient: "a@b.example",
          tags: [tags[0]!, { Name: "invoicing-user", Value: "not base64url!" }],
        }),
      ),
    ).toBeNull();
    expect(parseSesEvent("not an event")).toBeNull();
  });
});
