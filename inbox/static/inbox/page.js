/* The inbox page's fixed elements and settings, looked up once.
 *
 * Module scripts run after the document is parsed, so everything is there. The
 * data-testid hooks are a contract with tests/live/test_inbox_ui_*.py.
 */
export const root = document.getElementById('inbox');

const part = (testid) => (root ? root.querySelector(`[data-testid="${testid}"]`) : null);

export const listEl = part('card-list');
export const emptyEl = part('empty-state');
export const countEl = part('pending-count');
export const summaryEl = part('pending-summary');
export const feedbackEl = part('inbox-feedback');
export const staleEl = part('stale-notice');
export const pausedEl = part('paused-notice');
export const connEl = document.querySelector('[data-testid="connection-state"]'); // in the top bar
export const baseTitle = document.title;

export const config = {
  wsPath: (root && root.dataset.wsPath) || '/ws/inbox/',
  decisionUrl: (root && root.dataset.decisionUrlTemplate) || '/api/v1/approvals/{id}/decision/',
  stopUrl: (root && root.dataset.stopUrlTemplate) || '/api/v1/runs/{id}/stop/',
  approvalUrl: (root && root.dataset.approvalUrlTemplate) || '/api/v1/approvals/{id}/',
  cardsUrl: (root && root.dataset.cardsUrl) || '/api/v1/inbox/cards/',
  claimUrl: (root && root.dataset.claimUrlTemplate) || '/api/v1/approvals/{id}/claim/',
  decidedUrl: (root && root.dataset.decidedUrl) || '/api/v1/inbox/decided/',
  bulkUrl: (root && root.dataset.bulkDecisionUrl) || '/api/v1/approvals/bulk-decision/',
  reviewer: (root && root.dataset.reviewer) || '', // the signed-in reviewer: "You are reviewing" on their claims
  pollSeconds: Math.max(1, Number(root && root.dataset.pollSeconds) || 10),
};
