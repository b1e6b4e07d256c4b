import type { ChatChannel } from "./stages";

/**
 * AWS Chatbot posting the `Alarms` topic to chat channels (infra/stages.ts, `alarms.page.chat`):
 * one channel configuration per channel, subscribed to the topic (Chatbot subscribes itself to the
 * topics it is given), and one role for all of them.
 *
 * The role is what Chatbot assumes to draw a notification (the alarm's chart and details):
 * CloudWatch reads only. The Chatbot console's "notification permissions" template grants
 * `cloudwatch:Describe*`, `Get*` and `List*`; the actions below are the ones of those families that
 * concern alarms and their metrics, spelled out (no wildcard action anywhere in this app's roles).
 * The guardrail caps what anyone in the channel may run through Chatbot, whatever role they use:
 * CloudWatch reads (without one AWS applies AdministratorAccess). Chatbot's API lives in a few
 * regions only; the provider calls the nearest (us-west-2 for us-east-1), so nothing is set here.
 *
 * Not checked against a live Chatbot: there is no AWS account here (test/deploy/go-live.test.ts
 * checks what is declared).
 */
export const CHATBOT_ACTIONS = [
  "cloudwatch:DescribeAlarms",
  "cloudwatch:DescribeAlarmHistory",
  "cloudwatch:GetMetricData",
  "cloudwatch:GetMetricStatistics",
  "cloudwatch:GetMetricWidgetImage",
  "cloudwatch:ListMetrics",
];
export const CHATBOT_GUARDRAIL = "arn:aws:iam::aws:policy/CloudWatchReadOnlyAccess";

export function chatChannels(channels: readonly ChatChannel[], topicArn: $util.Input<string>): void {
  const role = new aws.iam.Role("AlarmsChatbotRole", {
    assumeRolePolicy: JSON.stringify({
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Principal: { Service: "chatbot.amazonaws.com" }, Action: "sts:AssumeRole" }],
    }),
  });
  new aws.iam.RolePolicy("AlarmsChatbotPolicy", {
    role: role.name,
    policy: JSON.stringify({
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Action: CHATBOT_ACTIONS, Resource: "*" }],
    }),
  });
  channels.forEach((channel, i) => {
    const common = {
      // 1–128 letters, digits, - and _; unique in the account (dev and production have their own).
      configurationName: `${$app.name}-${$app.stage}-alarms-${i + 1}`,
      iamRoleArn: role.arn,
      snsTopicArns: [topicArn],
      guardrailPolicyArns: [CHATBOT_GUARDRAIL],
      loggingLevel: "ERROR",
    };
    if ("slack" in channel)
      new aws.chatbot.SlackChannelConfiguration(`AlarmsSlack${i + 1}`, {
        ...common,
        slackTeamId: channel.slack.workspaceId,
        slackChannelId: channel.slack.channelId,
      });
    else
      new aws.chatbot.TeamsChannelConfiguration(`AlarmsTeams${i + 1}`, {
        ...common,
        tenantId: channel.teams.tenantId,
        teamId: channel.teams.teamId,
        channelId: channel.teams.channelId,
      });
  });
}
