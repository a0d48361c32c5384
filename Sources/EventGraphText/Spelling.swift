/// "Did you mean …?": the one edit distance behind every suggestion of the project
/// (model and mapping keys, import fields, command-line commands and options, query names).
public enum Spelling {
  /// The candidate within edit distance 2 of `word`, nearest first, then alphabetically.
  ///
  /// A candidate must also be closer than its own length, so that a short word is not
  /// "corrected" into an unrelated one (`to` is not a misspelling of `at`).
  public static func nearest(to word: String, among candidates: some Collection<String>) -> String? {
    let typed = Array(word)
    var best: (distance: Int, name: String)?
    for candidate in candidates {
      let letters = Array(candidate)
      let d = distance(typed, letters)
      guard d <= 2, d < max(typed.count, letters.count) else { continue }
      if let current = best, (current.distance, current.name) <= (d, candidate) { continue }
      best = (d, candidate)
    }
    return best?.name
  }

  /// The Damerau–Levenshtein distance in its optimal-string-alignment form: inserting,
  /// deleting or replacing a character, or swapping two neighbours, each costs 1.
  public static func distance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var beforePrevious = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        var d = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          d = min(d, beforePrevious[j - 2] + 1)
        }
        current[j] = d
      }
      (beforePrevious, previous, current) = (previous, current, beforePrevious)
    }
    return previous[b.count]
  }
}
