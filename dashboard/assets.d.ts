// The stylesheet main.tsx imports for its side effect: esbuild bundles it (src/pages/dashboard-build.ts).
declare module '*.css'
