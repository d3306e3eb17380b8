/** The package names that stand for react, react-dom and Testing Library in one React version. */
export function aliasesFor(version: string): Record<string, string> {
  if (version === '19') return {};
  return {
    react: `react-${version}`,
    'react-dom': `react-dom-${version}`,
    ...(version === '17' ? { '@testing-library/react': 'testing-library-react-17' } : {}),
  };
}
