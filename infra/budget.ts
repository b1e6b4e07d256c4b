import { stageSettings } from "./stages";

/**
 * A monthly cost budget of the stage's AWS account (infra/stages.ts, `budget`): an email at 80 % of
 * the month's actual spend and when the month's forecast passes the whole budget. Budgets are per
 * account, so only the named stages (each in its own account) declare one; personal stages share
 * dev's.
 */
const budget = stageSettings($app.stage).budget;
if (budget) {
  const notify = (notificationType: "ACTUAL" | "FORECASTED", threshold: number) => ({
    comparisonOperator: "GREATER_THAN",
    notificationType,
    threshold,
    thresholdType: "PERCENTAGE",
    subscriberEmailAddresses: [...budget.emails],
  });
  new aws.budgets.Budget("MonthlyBudget", {
    name: `${$app.name}-${$app.stage}-monthly`,
    budgetType: "COST",
    limitAmount: String(budget.monthlyUsd),
    limitUnit: "USD",
    timeUnit: "MONTHLY",
    notifications: [notify("ACTUAL", 80), notify("FORECASTED", 100)],
  });
}
