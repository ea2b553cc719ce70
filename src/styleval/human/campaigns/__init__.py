"""Campaign building: items from system outputs, quality-control items, and who annotates what in which order."""
from __future__ import annotations

from .builder import LIMITS, BuiltCampaign, CampaignLimits, CampaignSpec, ItemSpec, build_campaign
from .degrade import scramble

__all__ = ["LIMITS", "CampaignLimits", "CampaignSpec", "ItemSpec", "BuiltCampaign", "build_campaign", "scramble"]
