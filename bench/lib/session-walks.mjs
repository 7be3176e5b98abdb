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

/**
 * Walks whose get_activity calls ask for reference delivery (linked resource bodies bundled,
 * repeats as markers). Kept apart from WALKS so the golden transcript and the benchmark stay
 * on the default delivery; the side-by-side comparison runs both lists.
 */
export const REFERENCE_WALKS = [
  { name: 'ponytail/reference', workflow: 'ponytail', options: { bundle: 'reference' } },
  {
    name: 'requirements-refinement/success/reference',
    workflow: 'requirements-refinement',
    options: {
      bundle: 'reference',
      simulate: (activity) =>
        activity === 'validate-specification' ? { validation_passed: true } : {},
    },
  },
];
