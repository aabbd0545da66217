"""bookkit"""
