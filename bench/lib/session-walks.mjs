/**
 * The walks of the corpus every sessions check uses (the golden transcript, the side-by-side
 * comparison, the benchmark): each workflow with the default policy, and the paths a real
 * agent's convergence variables open (`simulate`), so every terminal branch is reached.
 */
export const WALKS = [
  { name: 'ponytail', workflow: 'ponytail', options: {} },
  { name: 'prism-update', workflow: 'prism-update', options: {} },
  { name: 'requirements-refinement/failure', workflow: 'requirements-refinement', options: {} },
  {
    name: 'requirements-refinement/success',
    workflow: 'requirements-refinement',
    options: {
      simulate: (activity) =>
        activity === 'validate-specification' ? { validation_passed: true } : {},
    },
  },
  {
    name: 'meta',
    workflow: 'meta',
    options: {
      simulate: (activity) =>
        activity === 'dispatch-client-workflow' ? { current_activity: null } : {},
    },
  },
];
