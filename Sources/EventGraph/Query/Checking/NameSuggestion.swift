/// "Did you mean …?" for misspelled names: the nearest candidate by edit distance.
enum NameSuggestion {
  /// The candidate nearest to `name`, when it is near enough to be a likely typo.
  static func nearest(to name: String, among candidates: [String]) -> String? {
    // A name longer than any model name is no typo, and would make the table large.
    guard name.utf8.count <= 128 else { return nil }
    let target = Array(name.lowercased())
    var best: (name: String, distance: Int)? = nil
    for candidate in candidates {
      let d = distance(target, Array(candidate.lowercased()))
      if d < (best?.distance ?? Int.max) { best = (candidate, d) }
    }
    guard let best, best.distance <= max(1, target.count / 3) else { return nil }
    return best.name
  }

  /// `", did you mean 'x'?"`, or the empty string.
  static func hint(for name: String, among candidates: [String]) -> String {
    nearest(to: name, among: candidates).map { " (did you mean '\($0)'?)" } ?? ""
  }

  /// Edit distance counting an insertion, a deletion, a substitution or a swap of two
  /// neighbours as one edit (optimal string alignment), so `nmae` is one edit from `name`.
  private static func distance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var beforePrevious = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        var d = min(previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1), previous[j] + 1, current[j - 1] + 1)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d = min(d, beforePrevious[j - 2] + 1) }
        current[j] = d
      }
      (beforePrevious, previous, current) = (previous, current, beforePrevious)
    }
    return previous[b.count]
  }
}
