"""Rule-based formality transfer, both directions, after the baseline of Rao & Tetreault (2018).

informal -> formal: normalise repeated punctuation and letters, expand slang and abbreviations from a word
list, expand contractions, drop interjections such as "lol", capitalise the first word, "i" and known proper
nouns, and end the sentence with a full stop when it has no final punctuation.
formal -> informal: the reverse rules (contract, abbreviate, lowercase the first word, drop the final stop).

The word lists are written for styleval; they are short on purpose and extensible through the constructor.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# informal token -> formal expansion (lowercase keys; matched as whole words)
SLANG: dict[str, str] = {
    "u": "you", "ur": "your", "r": "are", "y": "why", "n": "and", "b4": "before", "2day": "today",
    "2nite": "tonight", "tonite": "tonight", "2moro": "tomorrow", "tmrw": "tomorrow", "tmr": "tomorrow",
    "gonna": "going to", "wanna": "want to", "gotta": "have to", "kinda": "kind of", "sorta": "sort of",
    "dunno": "do not know", "lemme": "let me", "gimme": "give me", "ya": "you", "yall": "you all",
    "y'all": "you all", "cuz": "because", "coz": "because", "bc": "because", "b/c": "because", "pls": "please",
    "plz": "please", "thx": "thanks", "thanx": "thanks", "ty": "thank you", "idk": "I do not know",
    "imo": "in my opinion", "imho": "in my humble opinion", "btw": "by the way", "tbh": "to be honest",
    "asap": "as soon as possible", "rn": "right now", "nvm": "never mind", "omw": "on my way", "bf": "boyfriend",
    "gf": "girlfriend", "w/": "with", "w/o": "without", "txt": "text", "msg": "message", "ppl": "people",
    "sth": "something", "smth": "something", "abt": "about", "prob": "probably", "prolly": "probably",
    "def": "definitely", "ok": "okay", "k": "okay", "kk": "okay", "nah": "no", "yeah": "yes", "yep": "yes",
    "yup": "yes", "wat": "what", "wut": "what", "da": "the", "dat": "that", "dis": "this", "luv": "love",
    "gud": "good", "nite": "night", "bday": "birthday", "info": "information", "convo": "conversation",
    "im": "I am", "dont": "do not", "cant": "cannot", "wont": "will not", "didnt": "did not", "doesnt": "does not",
    "isnt": "is not", "wasnt": "was not", "ive": "I have", "youre": "you are", "thats": "that is",
}
# removed in formal text (whole words, with a following comma if any)
INTERJECTIONS = ("lol", "lmao", "lmfao", "rofl", "omg", "haha", "hahaha", "hehe", "ugh", "xd", "ha")
CONTRACTIONS: dict[str, str] = {
    "won't": "will not", "can't": "cannot", "shan't": "shall not", "ain't": "is not", "n't": " not",
    "'re": " are", "'m": " am", "'ll": " will", "'ve": " have", "'d": " would",
}
# contractions safe to make in formal -> informal (full phrase -> contracted)
CONTRACT: dict[str, str] = {
    "do not": "don't", "does not": "doesn't", "did not": "didn't", "is not": "isn't", "are not": "aren't",
    "was not": "wasn't", "were not": "weren't", "have not": "haven't", "has not": "hasn't", "will not": "won't",
    "would not": "wouldn't", "should not": "shouldn't", "could not": "couldn't", "cannot": "can't",
    "i am": "i'm", "you are": "you're", "we are": "we're", "they are": "they're", "it is": "it's",
    "that is": "that's", "i have": "i've", "i will": "i'll", "you will": "you'll", "going to": "gonna",
    "want to": "wanna", "got to": "gotta", "kind of": "kinda",
}
ABBREVIATE: dict[str, str] = {
    "you": "u", "your": "ur", "are": "r", "because": "cuz", "please": "pls", "thanks": "thx",
    "tonight": "tonite", "tomorrow": "tmrw", "okay": "ok", "people": "ppl", "by the way": "btw",
    "to be honest": "tbh", "as soon as possible": "asap", "right now": "rn", "i do not know": "idk",
}
PROPER_NOUNS = (
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
    "march", "april", "june", "july", "august", "september", "october", "november", "december", "english",
    "american", "christmas", "easter", "god", "jesus", "america", "england", "canada", "london", "paris",
    "facebook", "google", "youtube", "netflix", "iphone", "usa", "uk",
)
_ACRONYMS = {"usa": "USA", "uk": "UK", "iphone": "iPhone", "youtube": "YouTube"}
_WORD = r"(?<![\w'/])({})(?![\w'/])"
# "ur" means "you are" before these words (or any word ending in -ing), "your" otherwise
_UR_YOU_ARE = ("a", "an", "the", "so", "not", "very", "really", "home", "right", "wrong", "welcome", "gonna",
               "ready", "crazy", "sure", "too", "such", "in", "at", "on", "done", "late", "kidding")
_QUESTION_START = ("can", "could", "would", "will", "do", "does", "did", "is", "are", "was", "were", "should",
                   "shall", "may", "have", "has", "what", "why", "how", "where", "when", "who", "which")


def _sub_words(text: str, table: dict[str, str], flags: int = re.IGNORECASE) -> str:
    """Replace whole words or phrases from ``table`` (longest first), keeping case of the first letter."""
    if not table:
        return text
    keys = sorted(table, key=len, reverse=True)
    pattern = re.compile(_WORD.format("|".join(re.escape(k) for k in keys)), flags)

    def repl(m: re.Match[str]) -> str:
        word = m.group(0)
        new = table[word.lower()]
        if word[:1].isupper() and new[:1].islower():
            new = new[:1].upper() + new[1:]
        return new

    return pattern.sub(repl, text)


@dataclass
class FormalityRules:
    """The rule set; pass extra word lists to extend it."""

    slang: dict[str, str] = field(default_factory=lambda: dict(SLANG))
    interjections: tuple[str, ...] = INTERJECTIONS
    proper_nouns: tuple[str, ...] = PROPER_NOUNS
    contract: dict[str, str] = field(default_factory=lambda: dict(CONTRACT))
    abbreviate: dict[str, str] = field(default_factory=lambda: dict(ABBREVIATE))

    # -- informal -> formal ------------------------------------------------------------------------
    def to_formal(self, text: str) -> str:
        s = " ".join(text.split())
        s = re.sub(r"([!?.,])\1+", r"\1", s)                    # "!!!" -> "!", "..." -> "."
        s = re.sub(r"[!?]{2,}", "?", s)                            # "?!?" -> "?"
        s = re.sub(r"([a-z])\1{2,}", r"\1", s, flags=re.IGNORECASE)  # "sooo" -> "so"
        s = re.sub(_WORD.format("|".join(map(re.escape, self.interjections))) + r",?\s*", "", s,
                   flags=re.IGNORECASE)
        s = re.sub(r"(?<![\w'/])ur\s+(?=(\w+ing|{})\b)".format("|".join(_UR_YOU_ARE)), "you are ", s,
                   flags=re.IGNORECASE)
        s = _sub_words(s, self.slang)
        s = self._expand_contractions(s)
        s = re.sub(r"(?<![\w'])i(?![\w'])", "I", s)
        s = _sub_words(s, {p: _ACRONYMS.get(p, p.capitalize()) for p in self.proper_nouns}, flags=0)
        s = re.sub(r"\s+([,.!?;:])", r"\1", s).strip(" ,")
        if not s:
            return s
        s = s[0].upper() + s[1:]
        if s[-1] not in ".!?\"')":
            words = s.lower().split()
            asks = words[0] in _QUESTION_START and (len(words) < 2 or words[1] != "not")
            s += "?" if asks else "."
        return s

    @staticmethod
    def _expand_contractions(s: str) -> str:
        s = re.sub(r"\b(won't|can't|shan't|ain't)\b", lambda m: CONTRACTIONS[m.group(1).lower()], s,
                   flags=re.IGNORECASE)
        s = re.sub(r"(\w)n't\b", r"\1 not", s, flags=re.IGNORECASE)
        s = re.sub(r"\b(let)'s\b", r"\1 us", s, flags=re.IGNORECASE)
        return re.sub(r"(\w)('re|'m|'ll|'ve|'d)\b", lambda m: m.group(1) + CONTRACTIONS[m.group(2).lower()], s,
                      flags=re.IGNORECASE)

    # -- formal -> informal ------------------------------------------------------------------------
    def to_informal(self, text: str) -> str:
        s = " ".join(text.split())
        phrases = {k: v for k, v in self.abbreviate.items() if " " in k}
        s = _sub_words(s, phrases)                    # "I do not know" -> "idk" before "do not" -> "don't"
        s = _sub_words(s, self.contract)
        s = _sub_words(s, {k: v for k, v in self.abbreviate.items() if k not in phrases})
        if s and not (len(s) > 1 and s[1].isupper()):   # keep acronyms such as "USA"
            s = s[0].lower() + s[1:]
        s = re.sub(r"(?<![\w'])I(?=['\s]|$)", "i", s)
        return re.sub(r"\.$", "", s).rstrip()


_DEFAULT = FormalityRules()


def to_formal(text: str) -> str:
    """Informal -> formal with the default rules."""
    return _DEFAULT.to_formal(text)


def to_informal(text: str) -> str:
    """Formal -> informal with the default rules."""
    return _DEFAULT.to_informal(text)
