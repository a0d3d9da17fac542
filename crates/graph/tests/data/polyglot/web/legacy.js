function formatName(first, last = "") {
  return `${first} ${last}`.trim();
}

module.exports = { formatName };
