import Foundation

/// ISO 8601 with milliseconds, in UTC: the one date form of every public format.
public enum ISO8601 {
  /// Formats a date as `2026-11-29T10:00:00.000Z`.
  public static func format(_ date: Date) -> String {
    // To the nearest millisecond: a stored time (ms / 1000 as a Double) shows as itself.
    var ms = (date.timeIntervalSince1970 * 1000).rounded()
    if !ms.isFinite { ms = 0 }
    let total = Int64(ms)
    let (days, msOfDay) = floorDivMod(total, 86_400_000)
    let (y, m, d) = civilFromDays(days)
    let h = msOfDay / 3_600_000
    let mi = (msOfDay / 60_000) % 60
    let s = (msOfDay / 1000) % 60
    let f = msOfDay % 1000
    return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)).\(pad(f, 3))Z"
  }

  /// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`, rounding further digits to the nearest
  /// millisecond; `nil` when the text is not such a date.
  public static func parse(_ text: String) -> Date? {
    let u = Array(text.utf8)
    func num(_ from: Int, _ count: Int) -> Int64? {
      guard from + count <= u.count else { return nil }
      var n: Int64 = 0
      for c in u[from..<(from + count)] {
        guard c >= 48 && c <= 57 else { return nil }
        n = n * 10 + Int64(c - 48)
      }
      return n
    }
    guard u.count >= 20, u[4] == 45, u[7] == 45, u[10] == 84 || u[10] == 116, u[13] == 58, u[16] == 58,
      let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
      let s = num(17, 2), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
    else { return nil }
    var i = 19
    var fraction = 0.0
    if i < u.count, u[i] == 46 {
      i += 1
      var scale = 0.1
      let start = i
      while i < u.count, u[i] >= 48, u[i] <= 57 {
        fraction += Double(u[i] - 48) * scale
        scale /= 10
        i += 1
      }
      guard i > start else { return nil }
    }
    var offset: Int64 = 0
    guard i < u.count else { return nil }
    if u[i] == 90 || u[i] == 122 {
      i += 1
    } else if u[i] == 43 || u[i] == 45, let oh = num(i + 1, 2), u.count > i + 3, u[i + 3] == 58,
      let om = num(i + 4, 2)
    {
      offset = (oh * 60 + om) * 60 * (u[i] == 45 ? -1 : 1)
      i += 6
    } else {
      return nil
    }
    guard i == u.count else { return nil }
    let days = daysFromCivil(y, mo, d)
    let seconds = days * 86_400 + h * 3600 + mi * 60 + s - offset
    // To the nearest millisecond, the precision of every public date form, so that a date
    // read with more digits is written back as what was stored (`format` shows milliseconds).
    let ms = (fraction * 1000).rounded()
    return Date(timeIntervalSince1970: (Double(seconds) * 1000 + ms) / 1000)
  }

  private static func pad(_ n: Int64, _ width: Int) -> String {
    let s = String(n)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
  }

  private static func floorDivMod(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
    let q = a / b
    let r = a % b
    return r < 0 ? (q - 1, r + b) : (q, r)
  }

  // Howard Hinnant's civil-from-days algorithms (public domain), proleptic Gregorian.
  private static func daysFromCivil(_ y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
    let y = m <= 2 ? y0 - 1 : y0
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }

  private static func civilFromDays(_ z0: Int64) -> (Int64, Int64, Int64) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, m, d)
  }
}
