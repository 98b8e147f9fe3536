"""Knowledge on demand (AppCards-style): renames and routes an agent may consult when unsure.

* ``cards``     knowledge cards (a page's word -> this device's title, with the source of the claim)
                built from app resources, the UI map and a small documented table;
* ``curiosity`` how unsure the agent is about a step (when to consult the cards).
"""

from execution.knowledge.cards import Card, KnowledgeBase, knowledge_for_device, load_knowledge
from execution.knowledge.curiosity import Curiosity, curiosity

__all__ = ["Card", "KnowledgeBase", "knowledge_for_device", "load_knowledge", "Curiosity", "curiosity"]
