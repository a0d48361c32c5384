internal import EventGraphText

/// "Did you mean …?" for misspelled names: the nearest candidate by edit distance.
enum NameSuggestion {
  /// The candidate nearest to `name`, when it is near enough to be a likely typo.
  static func nearest(to name: String, among candidates: [String]) -> String? {
    // A name longer than any model name is no typo, and would make the table large.
    guard name.utf8.count <= 128 else { return nil }
    let target = Array(name.lowercased())
    var best: (name: String, distance: Int)? = nil
    for candidate in candidates {
      let d = Spelling.distance(target, Array(candidate.lowercased()))
      if d < (best?.distance ?? Int.max) { best = (candidate, d) }
    }
    guard let best, best.distance <= max(1, target.count / 3) else { return nil }
    return best.name
  }

  /// `", did you mean 'x'?"`, or the empty string.
  static func hint(for name: String, among candidates: [String]) -> String {
    nearest(to: name, among: candidates).map { " (did you mean '\($0)'?)" } ?? ""
  }
}
