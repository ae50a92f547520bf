"""Weight sync for an RL rollout engine: reloads trained weights streamed by SGLang's RunAI iterator."""
